"""The baseline the support check is measured against: coincidental arithmetic.

Before issue 8, a number not seen as such passed when it equalled a sum, difference,
small multiple or three-term sum of *any* numbers the turn saw. This module is that rule,
kept here (not in the library) so the benchmark can measure it beside today's check on
the same perturbations in the same run: a turn passes the baseline when AEM passes it or
when every value AEM found unsupported is such a coincidence.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from aem.compare.extract import extract_values
from aem.compare.settings import CompareSettings
from aem.foundation.model import MetricResult, Outcome

_MAX_MULTIPLIER = 9
_MAX_TRIPLE_POOL = 400


def coincidental(number: float, seen: Iterable[float], settings: CompareSettings) -> bool:
    """``number`` equals a + b, a − b, k × a (k ≤ 9) or a + b + c of seen numbers.

    >>> settings = CompareSettings()
    >>> coincidental(19, [14, 5, 30], settings), coincidental(180, [6, 30], settings)
    (True, True)
    >>> coincidental(23, [14, 30], settings)
    False
    """
    pool = sorted(set(seen))
    counts: dict[float, int] = {}
    for value in seen:
        counts[value] = counts.get(value, 0) + 1
    tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))

    def near(target: float) -> float | None:
        i = bisect.bisect_left(pool, target - tolerance)
        return pool[i] if i < len(pool) and pool[i] <= target + tolerance else None

    for a in pool:
        b = near(number - a)
        if b is not None and (b != a or counts.get(a, 0) > 1):
            return True
        b = near(a - number)
        if b is not None and b > 0:
            return True
        if any(abs(a * k - number) <= tolerance for k in range(2, _MAX_MULTIPLIER + 1)):
            return True
    small = pool[-_MAX_TRIPLE_POOL:]
    for i, a in enumerate(small):
        for b in small[i + 1 :]:
            c = near(number - a - b)
            if c is not None and c not in (a, b):
                return True
    return False


def passes_baseline(
    verdict: MetricResult, seen: Iterable[float], settings: CompareSettings
) -> bool:
    """Whether the baseline passes a turn AEM judged ``verdict``: AEM passed it, or it
    failed only for unsupported numbers that are each a coincidence of seen numbers."""
    if verdict.outcome is not Outcome.FAIL:
        return True
    if any(e.field != "unsupported" for e in verdict.evidence):
        return False  # a contradiction or a claimed success: no arithmetic excuses it
    pool = list(seen)
    for evidence in verdict.evidence:
        numbers = [v for v in extract_values(str(evidence.actual), settings) if v.kind == "number"]
        if len(numbers) != 1 or not coincidental(float(numbers[0].value), pool, settings):  # type: ignore[arg-type]
            return False
    return True
