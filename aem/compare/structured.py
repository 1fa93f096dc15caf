"""JSON objects and lists, compared recursively with the leaf comparison.

Why multisets: tool results and arguments list items in whatever order the backend
returned them; ``[a, b]`` and ``[b, a]`` hold the same facts unless told otherwise. The
pairing of list items is optimal (Hungarian), never first-fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from aem.compare.assignment import linear_sum_assignment
from aem.compare.result import Comparison, short

Leaf = Callable[[Any, Any], Comparison]


def maybe_json(value: Any) -> Any:
    """A string holding a JSON object or list, parsed; anything else unchanged.

    >>> maybe_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> maybe_json("[not json")
    '[not json'
    """
    if isinstance(value, str):
        head = value.lstrip()[:1]
        if head in ("{", "["):
            try:
                return json.loads(value)
            except ValueError:
                return value
    return value


def compare_mappings(
    expected: Mapping[Any, Any], actual: Mapping[Any, Any], leaf: Leaf
) -> Comparison:
    """Same keys, and every value the same (recursively); reason names the first bad key.

    >>> from aem.compare import compare
    >>> compare({"a": 1, "b": "x"}, {"b": "X", "a": "1.0"}).same
    True
    """
    keys = list(expected) + [k for k in actual if k not in expected]
    scores: list[float] = []
    problems: list[str] = []
    for key in keys:
        if key not in actual:
            scores.append(0.0)
            problems.append(f"{key}: missing")
        elif key not in expected:
            scores.append(0.0)
            problems.append(f"{key}: unexpected")
        else:
            child = leaf(expected[key], actual[key])
            scores.append(child.score)
            if not child.same:
                problems.append(f"{key}: {child.reason}")
    score = sum(scores) / len(scores) if scores else 1.0
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return Comparison(False, min(score, 0.999), "json", problems[0] + more)
    return Comparison(True, 1.0, "json", f"all {len(keys)} keys match")


def compare_sequences(
    expected: Sequence[Any], actual: Sequence[Any], leaf: Leaf, *, ordered: bool
) -> Comparison:
    """Lists as multisets (optimal pairing of items) or position by position.

    >>> from aem.compare import compare
    >>> compare([1, "ORD-42"], ["ord 42", 1.0]).same
    True
    """
    n, m = len(expected), len(actual)
    if n == 0 and m == 0:
        return Comparison(True, 1.0, "json", "both empty")
    if ordered:
        pairs = [(i, i, leaf(expected[i], actual[i])) for i in range(min(n, m))]
    else:
        grid = [[leaf(e, a) for a in actual] for e in expected]
        # Cost 0 for a same pair, 1 + (1 - score) otherwise: maximise same pairs first.
        cost = np.array([[0.0 if c.same else 2.0 - c.score for c in row] for row in grid])
        pairs = []
        if n and m:
            rows, cols = linear_sum_assignment(cost.reshape(n, m))
            pairs = [(int(i), int(j), grid[i][j]) for i, j in zip(rows, cols, strict=True)]
    score = sum(c.score for _, _, c in pairs) / max(n, m)
    bad = [(i, j, c) for i, j, c in pairs if not c.same]
    if bad:
        i, _, c = bad[0]
        more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
        return Comparison(False, min(score, 0.999), "json", f"[{i}]: {c.reason}{more}")
    if n != m:
        return Comparison(
            False, min(score, 0.999), "json", f"{n} items expected, {m} given: {short(actual)}"
        )
    return Comparison(True, 1.0, "json", f"all {n} items match")
