"""The ``Examples`` section of every public name's docstring runs as a doctest,
and every public name has one; every public method and property of a public
class has a docstring (the API reference shows it)."""

import doctest
import inspect

import pytest

import bandit_tree_tools as btt

NAMES = sorted(btt.__all__)


def _docstring(name):
    return inspect.getdoc(getattr(btt, name)) or ""


def _has_examples(text):
    lines = text.splitlines()
    return any(
        line.strip() == "Examples" and k + 1 < len(lines) and set(lines[k + 1].strip()) == {"-"}
        for k, line in enumerate(lines)
    )


def test_every_public_name_has_an_examples_section():
    missing = [name for name in NAMES if not _has_examples(_docstring(name))]
    assert not missing, f"public names without an Examples section: {', '.join(missing)}"


def test_every_public_method_and_property_has_a_docstring():
    missing = []
    for name in NAMES:
        owner = getattr(btt, name)
        if not inspect.isclass(owner) or issubclass(owner, Exception):
            continue
        for member in dir(owner):
            static = inspect.getattr_static(owner, member)
            if member.startswith("_") or not (inspect.isfunction(static) or isinstance(static, property)):
                continue
            inherited = next(base for base in owner.__mro__ if member in vars(base))
            if not inherited.__module__.startswith("bandit_tree_tools"):
                continue  # scikit-learn's, ipywidgets' and the standard library's own
            if not (inspect.getdoc(getattr(owner, member)) or "").strip():
                missing.append(f"{name}.{member}")
    assert not missing, f"public members without a docstring: {', '.join(missing)}"


@pytest.mark.parametrize("name", NAMES)
def test_examples_run(name, tmp_path, monkeypatch):
    text = _docstring(name)
    if not _has_examples(text):
        pytest.fail(f"btt.{name} has no Examples section in its docstring")
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, f"bandit_tree_tools.{name}", None, 0)
    assert test.examples, f"btt.{name}: the Examples section has no '>>>' lines"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
