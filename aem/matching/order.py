"""The case's partial order: checked only for the pairs it declares.

Why partial: "read before write, create before cancel" constrains two calls; everything
else the agent may do in any order (parallel calls are siblings, not a chain).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aem.matching.result import OrderViolation


def order_violations(
    order: Sequence[tuple[int, int]], paired: Mapping[int, int]
) -> list[OrderViolation]:
    """Order pairs whose two calls were both made, the ``after`` one first.

    ``paired`` maps expected index to actual position; a pair with a missing call is not
    an order violation (the missing call is already reported).

    >>> order_violations([(0, 1)], {0: 3, 1: 1})
    [OrderViolation(before=0, after=1, actual_before=3, actual_after=1)]
    >>> order_violations([(0, 1)], {0: 0})
    []
    """
    found = []
    for before, after in order:
        first, second = paired.get(before), paired.get(after)
        if first is not None and second is not None and first > second:
            found.append(OrderViolation(before, after, first, second))
    return found
