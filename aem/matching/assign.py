"""Optimal pairing of expected and actual calls of one tool (never greedy first-fit).

The full problem is a cost matrix with prohibitive cost between different tool names;
that matrix is block-diagonal by name, so each block is solved alone — the same optimum,
at a fraction of the cost. Inside a block, ``linear_sum_assignment`` finds, over a
maximum-cardinality pairing, the most fully right pairs, then the fewest wrong
arguments. A fast path skips SciPy when an in-order scan already finds a complete
zero-cost pairing: costs are never negative, so no other pairing can be better (a
certified optimum, not a heuristic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from aem.compare.assignment import linear_sum_assignment
from aem.matching.result import ArgumentMismatch

Mismatches = Callable[[int, int], list[ArgumentMismatch]]


def assign_block(
    expected: Sequence[int], actual: Sequence[int], mismatches: Mismatches, unit_cost: float
) -> list[tuple[int, int, list[ArgumentMismatch]]]:
    """Pair expected with actual call indexes of one tool, minimising argument mismatches.

    Ties break toward keeping relative order (a small squared position penalty), so that
    with identical calls the k-th expected pairs with the k-th actual and the case's
    order pairs are judged on the natural pairing.

    >>> args = {0: 1, 1: 2}, {0: 2, 1: 1}
    >>> assign_block([0, 1], [0, 1], lambda i, j: [] if args[0][i] == args[1][j] else ["x"], 1.0)
    [(0, 1, []), (1, 0, [])]
    """
    if len(expected) == 1 and len(actual) == 1:
        return [(expected[0], actual[0], mismatches(expected[0], actual[0]))]
    grid: dict[tuple[int, int], list[ArgumentMismatch]] = {}
    used: set[int] = set()
    found: list[tuple[int, int, list[ArgumentMismatch]]] = []
    for i in expected:
        for j in actual:
            if j in used:
                continue
            bad = grid[i, j] = mismatches(i, j)
            if not bad:
                used.add(j)
                found.append((i, j, bad))
                break
    if len(found) == min(len(expected), len(actual)):
        return found
    for i in expected:
        for j in actual:
            if (i, j) not in grid:
                grid[i, j] = mismatches(i, j)
    # Lexicographic objective: most fully right pairs first, then fewest wrong arguments,
    # then keep relative order. A wrong pair costs more than all mismatches together, so
    # two half-wrong pairs never beat one right pair plus one very wrong pair.
    wrong_pair = unit_cost * (1 + sum(len(bad) for bad in grid.values()))
    span = max(max(expected), max(actual)) + 1
    tie = unit_cost / (2.0 * len(expected) * span * span)  # all ties together < one mismatch
    cost = np.empty((len(expected), len(actual)))
    for r, i in enumerate(expected):
        for c, j in enumerate(actual):
            bad = grid[i, j]
            cost[r, c] = (wrong_pair if bad else 0.0) + unit_cost * len(bad) + tie * (i - j) ** 2
    rows, cols = linear_sum_assignment(cost)
    return [
        (expected[r], actual[c], grid[expected[r], actual[c]])
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True)
    ]
