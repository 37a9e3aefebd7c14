"""The interop modules import each other one way only (also inside
functions), so any of them can be imported first."""

import ast
from pathlib import Path

import bandit_tree_tools.interop as interop

PACKAGE = "bandit_tree_tools.interop"
FOLDER = Path(interop.__file__).parent


def _module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _imports(path: Path) -> set:
    """Interop modules ``path`` imports anywhere in its body."""
    modules = {_module_name(p) for p in FOLDER.glob("*.py")}
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = PACKAGE + (f".{node.module}" if node.module else "")
            elif node.level == 0 and node.module:
                base = node.module
            else:
                continue
            # "from . import _x" imports the module _x; "from .m import f" the module m
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            candidates = submodules if len(submodules) == len(node.names) else [base] + submodules
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in candidates if name in modules)
    found.discard(_module_name(path))
    return found


def graph() -> dict:
    return {_module_name(path): _imports(path) for path in FOLDER.glob("*.py")}


def cycle(edges: dict):
    """One import cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_interop_modules_have_no_import_cycle():
    edges = graph()
    assert f"{PACKAGE}._sklearn_common" in edges[f"{PACKAGE}._sklearn_gradient_boosting"]
    assert cycle(edges) is None, " -> ".join(cycle(edges))
