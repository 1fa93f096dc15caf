"""Fail when a function in the library grows past a size a reader can hold in mind.

Why a script and not a ruff rule: ruff counts statements and branches, not lines, and
a 120-line function of simple statements is still too long to review. Run by
``make lint`` over ``aem/`` and ``collectors/``.

    python -m scripts.check_function_length [--max 60] [paths...]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

DEFAULT_PATHS = ("aem", "collectors")


def long_functions(root: Path, limit: int) -> list[tuple[str, int, str, int]]:
    """``(file, line, name, length)`` of every function longer than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append((str(path), node.lineno, node.name, length))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=60)
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    args = parser.parse_args()
    offenders = [f for p in args.paths for f in long_functions(Path(p), args.max)]
    for file, line, name, length in offenders:
        print(f"{file}:{line}: {name} is {length} lines (limit {args.max})")
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
