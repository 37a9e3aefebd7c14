"""Command line: ``bandit-tree-tools SUBCOMMAND ...`` or ``python -m bandit_tree_tools``.

Each subcommand lives next to the code it drives and is listed in
``SUBCOMMANDS`` as "module:function"; the function receives the argparse
subparsers object and registers its parser, setting ``func`` to the callable
that runs it. That callable returns the exit status, or the text to print
(a string, or an iterator of strings printed as they come, for long jobs).
"""

import argparse
import sys
from importlib import import_module

SUBCOMMANDS = {
    "demo": "bandit_tree_tools._demo:register",
    "prune": "bandit_tree_tools.pruning._cli:register",
    "compile": "bandit_tree_tools._compile:register",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bandit-tree-tools",
        description="Import, prune, re-split and summarise trained tree models with multi-armed bandits.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for spec in SUBCOMMANDS.values():
        module, function = spec.split(":")
        try:
            getattr(import_module(module), function)(subparsers)
        except ModuleNotFoundError as error:
            if not error.name or not error.name.startswith("bandit_tree_tools"):
                raise
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    result = args.func(args)
    if isinstance(result, str):
        print(result)
        return 0
    if hasattr(result, "__next__"):
        for block in result:
            print(block, flush=True)
        return 0
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
