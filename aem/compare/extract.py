"""Values stated in free text — numbers, dates and periods, identifiers — with their spans.

Why: truthfulness checks what a turn *states* against tool data and the case's facts; it
needs each stated value normalised (``1 234,50 €`` → 1234.5, ``March 2026`` → the month)
and located (to quote it as evidence).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from aem.compare.clock import find_days, find_times
from aem.compare.dates import find_dates
from aem.compare.ids import find_ids
from aem.compare.numbers import find_number_words, find_numbers
from aem.compare.relative_days import find_relative_days, session_day
from aem.compare.settings import CompareSettings
from aem.compare.textkinds import is_code_text, non_factual_regions
from aem.foundation.sessioncache import Slot, active_cache, session_cache

StatedKind = Literal["number", "date", "period", "id", "time", "day"]


@dataclass(frozen=True, slots=True)
class StatedValue:
    """One value found in text.

    ``value`` is a float (number), ``(start, end)`` inclusive dates or instants
    (date / period), the canonical id string (id), or a key from :mod:`aem.compare.clock`
    (``time:20:30`` for a time of day, ``day:05-26`` for a day named without its year).
    ``unit`` is the canonical unit or currency of a number, if stated.
    """

    kind: StatedKind
    raw: str
    value: float | tuple[date | datetime, date | datetime] | str
    start: int
    end: int
    unit: str | None = None

    @property
    def number(self) -> float:
        """The number a ``number`` value states, typed (``value`` is a float for that
        kind only). Why an accessor: the callers that compare numbers read it in one
        place instead of each casting ``value`` past the type checker. Any other kind
        is a ``ValueError``, as ``float()`` of its value was."""
        if isinstance(self.value, int | float):
            return float(self.value)
        raise ValueError(f"a {self.kind} value states no number: {self.raw!r}")


# A text with the settings that change how it reads → its values, in the session cache
# while a :func:`values_memoised` block runs.
_VALUES: Slot[dict[tuple[str, bool, str, bool, bool], tuple[StatedValue, ...]]] = Slot(
    "stated values"
)


# Within a ``values_memoised()`` block (also a decorator) each text's values are
# extracted once. Why: evaluating one session asks about the same text more than once (a
# turn's text is evidence for later turns and its own claims; a tool result may come back
# alike from many calls), and extraction is a large part of evaluating a long session.
# The values are kept in the session's cache, which the block opens, so they live as long
# as one session's evaluation.
values_memoised = session_cache


def extract_values(
    text: str, settings: CompareSettings | None = None, *, words: bool = False
) -> list[StatedValue]:
    """Numbers (with unit/currency), dates/periods, times of day, days without a year
    and ids in ``text``, in text order; with ``words``, numbers written as words too
    (``three options``: what value support reads, on both sides of the comparison).

    Overlaps resolve to the longest reading at a position (``2026-03-01`` is a date, not
    three numbers; ``ORD-42`` is an id, not -42).

    >>> [(v.kind, v.raw) for v in extract_values("Refund $1,200.50 for ORD-42 in March 2026")]
    [('number', '$1,200.50'), ('id', 'ORD-42'), ('period', 'March 2026')]
    """
    settings = settings or CompareSettings()
    cache = active_cache()
    if cache is None:
        return _extract_values(text, settings, words)
    memo = cache.table(_VALUES)
    # Every setting the extractors read (dates, numbers, ids) is in the key.
    key = (
        text,
        settings.slash_dates_day_first,
        settings.ambiguous_comma,
        settings.id_ignore_leading_zeros,
        words,
    )
    found = memo.get(key)
    if found is None:
        found = memo[key] = tuple(_extract_values(text, settings, words))
    return list(found)


def _extract_values(text: str, settings: CompareSettings, words: bool) -> list[StatedValue]:
    candidates: list[tuple[int, int, int, StatedValue]] = []  # start, -length, priority
    for span, start, end in find_dates(text, day_first=settings.slash_dates_day_first):
        kind: StatedKind = "period" if span.is_period else "date"
        found = StatedValue(kind, text[start:end], span.value, start, end)
        candidates.append((start, start - end, 0, found))
    today = session_day()
    if today is not None:  # "tomorrow", "el próximo martes": only on a known day
        dated = [(c[0], c[0] - c[1]) for c in candidates]
        for day, start, end in find_relative_days(text, today):
            if any(start < date_end and date_start < end for date_start, date_end in dated):
                continue  # "nächsten Dienstag, 21. Juli 2026": the date says the day
            relative = StatedValue("date", text[start:end], (day, day), start, end)
            candidates.append((start, start - end, 0, relative))
    for key, start, end in find_times(text):
        candidates.append(
            (start, start - end, 0, StatedValue("time", text[start:end], key, start, end))
        )
    for key, start, end in find_days(text):
        candidates.append(
            (start, start - end, 0, StatedValue("day", text[start:end], key, start, end))
        )
    for number, start, end in find_numbers(text, settings.ambiguous_comma):
        found = StatedValue("number", text[start:end], number.value, start, end, number.unit)
        candidates.append((start, start - end, 1, found))
    if words:
        for number_value, start, end in find_number_words(text):
            found = StatedValue("number", text[start:end], number_value, start, end)
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


def extract_claims(text: str, settings: CompareSettings | None = None) -> list[StatedValue]:
    """The values ``text`` *states*, numbers written as words included: those outside
    code, diffs, traces, logs, URLs, paths, versions and model names
    (:mod:`aem.compare.textkinds`).

    Why apart from :func:`extract_values`: evidence keeps every value (a tool result's
    URL may hold the id an agent repeats), a claim does not (``num_clients = 4`` in a
    code block defines a variable; it does not say there are four clients).

    >>> [v.raw for v in extract_claims("Paid $120 (see https://shop.example/o/ORD-77)")]
    ['$120']
    """
    if is_code_text(text):
        return []  # a code-writing turn: even ``total = 150`` there defines, not states
    values = extract_values(text, settings, words=True)
    merged: list[list[int]] = []
    for region in non_factual_regions(text):  # sorted by start: merge into disjoint spans
        if merged and region.start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], region.end)
        else:
            merged.append([region.start, region.end])
    starts = [start for start, _ in merged]

    def covered(value: StatedValue) -> bool:
        i = bisect.bisect_left(starts, value.end) - 1  # the last span starting before its end
        return i >= 0 and merged[i][1] > value.start

    return [value for value in values if not covered(value)]
