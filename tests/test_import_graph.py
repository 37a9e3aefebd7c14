"""The package's modules import each other one way only: no import cycle,
counting the imports inside functions too (a lazy import that closes a
cycle is a layering error waiting to bite the first caller)."""

import ast
from pathlib import Path

import bandit_tree_tools

ROOT = Path(bandit_tree_tools.__file__).parent


def _modules() -> dict:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imports(name: str, path: Path, modules: dict) -> set:
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:  # "from . import _x" imports the module _x; "from .m import f" the module m
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    found.discard(name)
    return found & set(modules)


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_the_package_has_no_import_cycle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert len(graph) > 50 and graph["bandit_tree_tools.pruning._engine._result"], "the graph was read"
    assert _cycles(graph) == []


def test_a_cycle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_format_and_the_importers_load_without_pandas_and_scikit_learn():
    # 0.7 s a fresh process would pay on every import of a LightGBM or XGBoost model (a label
    # check at the top of tree/_input.py once pulled both in)
    import subprocess
    import sys

    code = "import sys, bandit_tree_tools.interop; print(sorted({'pandas', 'sklearn'} & set(sys.modules)))"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert found.strip() == "[]"
