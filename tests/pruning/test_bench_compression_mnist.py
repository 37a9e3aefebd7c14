"""The compression benchmark's MNIST reader, on small idx files written here."""

import gzip
import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_compression.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_compression", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_idx(folder, images, labels, image_magic=2051):
    header = image_magic.to_bytes(4, "big") + len(images).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    with gzip.open(folder / "t10k-images-idx3-ubyte.gz", "wb") as file:
        file.write(header + images.astype(np.uint8).tobytes())
    with gzip.open(folder / "t10k-labels-idx1-ubyte.gz", "wb") as file:
        file.write((2049).to_bytes(4, "big") + len(labels).to_bytes(4, "big") + labels.astype(np.uint8).tobytes())


def test_mnist_reads_images_row_major_and_labels(bench, tmp_path):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28))
    labels = np.array([2, 4, 7, 2, 4])
    write_idx(tmp_path, images, labels)
    X, digits = bench.mnist(tmp_path)
    assert X.shape == (5, 784)
    np.testing.assert_array_equal(X, images.reshape(5, 784))
    np.testing.assert_array_equal(digits, labels)


def test_mnist_2v4_keeps_twos_and_fours_with_four_as_class_one(bench, tmp_path, monkeypatch):
    images = np.arange(6 * 784).reshape(6, 28, 28) % 256
    labels = np.array([2, 4, 7, 2, 4, 1])
    (tmp_path / "mnist").mkdir()
    write_idx(tmp_path / "mnist", images, labels)
    monkeypatch.setattr(bench, "DATASETS", tmp_path)
    X, y, task = bench.load("mnist_2v4")
    assert task == "classification"
    np.testing.assert_array_equal(y, [0, 1, 0, 1])
    np.testing.assert_array_equal(X, images.reshape(6, 784)[[0, 1, 3, 4]])
    assert X.dtype == np.float64


def test_mnist_refuses_a_file_of_another_magic(bench, tmp_path):
    write_idx(tmp_path, np.zeros((1, 28, 28)), np.array([2]), image_magic=2049)
    with pytest.raises(ValueError, match="not an idx file of magic 2051"):
        bench.mnist(tmp_path)
