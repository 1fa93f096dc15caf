"""Values stated in free text — numbers, dates and periods, identifiers — with their spans.

Why: truthfulness checks what a turn *states* against tool data and the case's facts; it
needs each stated value normalised (``1 234,50 €`` → 1234.5, ``March 2026`` → the month)
and located (to quote it as evidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from aem.compare.dates import find_dates
from aem.compare.ids import find_ids
from aem.compare.numbers import find_numbers
from aem.compare.settings import CompareSettings

StatedKind = Literal["number", "date", "period", "id"]


@dataclass(frozen=True, slots=True)
class StatedValue:
    """One value found in text.

    ``value`` is a float (number), ``(start, end)`` inclusive dates or instants
    (date / period), or the canonical id string (id). ``unit`` is the canonical unit or
    currency of a number, if stated.
    """

    kind: StatedKind
    raw: str
    value: float | tuple[date | datetime, date | datetime] | str
    start: int
    end: int
    unit: str | None = None


def extract_values(text: str, settings: CompareSettings | None = None) -> list[StatedValue]:
    """Numbers (with unit/currency), dates/periods and ids in ``text``, in text order.

    Overlaps resolve to the longest reading at a position (``2026-03-01`` is a date, not
    three numbers; ``ORD-42`` is an id, not -42).

    >>> [(v.kind, v.raw) for v in extract_values("Refund $1,200.50 for ORD-42 in March 2026")]
    [('number', '$1,200.50'), ('id', 'ORD-42'), ('period', 'March 2026')]
    """
    settings = settings or CompareSettings()
    candidates: list[tuple[int, int, int, StatedValue]] = []  # start, -length, priority
    for span, start, end in find_dates(text, day_first=settings.slash_dates_day_first):
        kind: StatedKind = "period" if span.is_period else "date"
        found = StatedValue(kind, text[start:end], span.value, start, end)
        candidates.append((start, start - end, 0, found))
    for number, start, end in find_numbers(text, settings.ambiguous_comma):
        found = StatedValue("number", text[start:end], number.value, start, end, number.unit)
        candidates.append((start, start - end, 1, found))
    for raw, canonical, start, end in find_ids(text, settings):
        candidates.append((start, start - end, 2, StatedValue("id", raw, canonical, start, end)))
    candidates.sort(key=lambda c: c[:3])
    chosen: list[StatedValue] = []
    for _, _, _, value in candidates:
        if chosen and value.start < chosen[-1].end:
            continue
        chosen.append(value)
    return chosen
