import numpy as np

from bandit_tree_tools.bandits._random import kernel_rng, normal, randint, shuffle, uniform


def test_kernel_generator_is_reproducible_and_uniform():
    state = kernel_rng(42)
    draws = np.array([uniform(state) for _ in range(20000)])
    assert draws.min() >= 0.0 and draws.max() < 1.0
    assert abs(draws.mean() - 0.5) < 0.01
    assert uniform(kernel_rng(42)) == draws[0]
    assert uniform(kernel_rng(43)) != draws[0]


def test_kernel_state_from_a_legacy_random_state_and_a_generator():
    assert kernel_rng(np.random.RandomState(0)).dtype == np.uint64
    generator = np.random.default_rng(5)
    first, second = kernel_rng(generator), kernel_rng(generator)
    assert not np.array_equal(first, second)  # a Generator is used as is, so it advances


def test_integers_normals_and_shuffles():
    state = kernel_rng(0)
    ints = np.array([randint(state, 5) for _ in range(5000)])
    assert set(ints.tolist()) == {0, 1, 2, 3, 4}
    normals = np.array([normal(state) for _ in range(20000)])
    assert abs(normals.mean()) < 0.03 and abs(normals.std() - 1.0) < 0.03
    order = np.arange(50)
    shuffle(order, state)
    assert sorted(order.tolist()) == list(range(50)) and not np.array_equal(order, np.arange(50))
