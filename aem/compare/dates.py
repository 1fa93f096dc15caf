"""Dates, instants and periods, compared as the span of days (or instant) they denote.

Why spans: "March 2026", ``2026-03``, ``03/2026`` and ``2026-03-01..2026-03-31`` are one
period; the seed's March-refunds failure is exactly an agent that wrote the wrong year.
A period equals a date range when both cover the same first and last day.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from aem.compare.result import Comparison, short
from aem.compare.settings import CompareSettings
from aem.foundation.vocabulary import (
    MONTH_ABBREVIATIONS_EN,
    MONTH_NAMES_PATTERN,
    MONTH_NUMBERS,
    MONTHS_EN_PATTERN,
    WEEKDAY_NAMES_PATTERN,
    WEEKDAYS_EN,
)

_MONTHS = {abbreviation: n for n, abbreviation in enumerate(MONTH_ABBREVIATIONS_EN, 1)}
_MON = rf"(?P<mon>{MONTHS_EN_PATTERN})\.?"
# A month of any read language (CLDR's names): "12. Mai 2026", "12 de mayo de 2026",
# "12 мая 2026 г.", "mayo de 2026".
_MON_ANY = rf"(?P<mon>{MONTH_NAMES_PATTERN}|{MONTHS_EN_PATTERN})\.?"
_Y = r"(?P<y>(?:19|20)\d\d)"
# A year's tail in Russian ("2026 г.", "2026 года").
_YEAR_WORD = r"(?:\s?г\.|\s+года?(?!\w))?"
_D = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_WEEKDAY = (
    rf"(?:(?:(?:{'|'.join(day[:3] for day in WEEKDAYS_EN)})[a-z]*|{WEEKDAY_NAMES_PATTERN}),?\s+)?"
)
_RANGE_SEP = re.compile(r"^\s*(?:\.\.|/|to|until|till|through|thru|[-–—])\s*$", re.IGNORECASE)
_RANGE_KEYS = (
    ("start", "end"),
    ("from", "to"),
    ("start_date", "end_date"),
    ("date_from", "date_to"),
    ("since", "until"),
    ("begin", "end"),
)


@dataclass(frozen=True, slots=True)
class DateSpan:
    """What a date-like value denotes: first and last day (inclusive), or one instant.

    ``instant`` is set for date-times; ``granularity`` is day, week, month, quarter,
    half, year, range or instant.
    """

    start: date
    end: date
    granularity: str
    raw: str
    instant: datetime | None = None

    @property
    def is_period(self) -> bool:
        return self.granularity not in ("day", "instant")

    @property
    def value(self) -> tuple[date | datetime, date | datetime]:
        if self.instant is not None:
            return (self.instant, self.instant)
        return (self.start, self.end)

    def describe(self) -> str:
        if self.instant is not None:
            return self.instant.isoformat()
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


def _month_end(year: int, month: int) -> date:
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return nxt - timedelta(days=1)


def _month(y: int, m: int, raw: str) -> DateSpan:
    return DateSpan(date(y, m, 1), _month_end(y, m), "month", raw)


def _mon(m: re.Match[str]) -> int:
    name = m["mon"].lower().rstrip(".")
    return MONTH_NUMBERS.get(name) or _MONTHS[name[:3]]


def _day(y: int, m: int, d: int, raw: str) -> DateSpan:
    day = date(y, m, d)
    return DateSpan(day, day, "day", raw)


def _slash(m: re.Match[str], day_first: bool) -> DateSpan:
    a, b, y = int(m["a"]), int(m["b"]), int(m["y"])
    if a > 12 or (day_first and b <= 12):
        return _day(y, b, a, m.group(0))
    return _day(y, a, b, m.group(0))


def _instant(m: re.Match[str]) -> DateSpan:
    text = m.group(0).replace(" ", "T", 1)
    moment = datetime.fromisoformat(text.replace("z", "Z"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return DateSpan(moment.date(), moment.date(), "instant", m.group(0), moment)


def _quarter(m: re.Match[str]) -> DateSpan:
    y, q = int(m["y"]), int(m["q"])
    return DateSpan(date(y, 3 * q - 2, 1), _month_end(y, 3 * q), "quarter", m.group(0))


def _half(m: re.Match[str]) -> DateSpan:
    y, h = int(m["y"]), int(m["h"])
    return DateSpan(date(y, 6 * h - 5, 1), _month_end(y, 6 * h), "half", m.group(0))


def _week(m: re.Match[str]) -> DateSpan:
    y, w = int(m["y"]), int(m["w"])
    start = date.fromisocalendar(y, w, 1)
    return DateSpan(start, start + timedelta(days=6), "week", m.group(0))


_Builder = Callable[[re.Match[str], bool], DateSpan]
# (pattern, builder); the order matters only for whole-value parsing (first match wins).
_FORMS: list[tuple[str, _Builder]] = [
    (
        r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,6})?)?(?:[zZ]|[+-]\d\d:?\d\d)?",
        lambda m, _: _instant(m),
    ),
    (
        rf"{_Y}[-/](?P<m>[01]?\d)[-/]{_D}",
        lambda m, _: _day(int(m["y"]), int(m["m"]), int(m["d"]), m.group(0)),
    ),
    (
        rf"(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)\.{_Y}",
        lambda m, _: _day(int(m["y"]), int(m["m"]), int(m["d"]), m.group(0)),
    ),
    (rf"(?P<a>[0-3]?\d)/(?P<b>[0-3]?\d)/{_Y}", _slash),
    (
        rf"{_WEEKDAY}{_MON}\s+{_D},?\s+{_Y}",
        lambda m, _: _day(int(m["y"]), _mon(m), int(m["d"]), m.group(0)),
    ),
    (
        rf"{_WEEKDAY}{_D}\.?\s+(?:of\s+|de\s+)?{_MON_ANY},?\s+(?:de\s+|del\s+)?{_Y}{_YEAR_WORD}",
        lambda m, _: _day(int(m["y"]), _mon(m), int(m["d"]), m.group(0)),
    ),
    (rf"{_Y}-W(?P<w>[0-5]\d)", lambda m, _: _week(m)),
    (rf"{_Y}[-\s]?Q(?P<q>[1-4])", lambda m, _: _quarter(m)),
    (rf"Q(?P<q>[1-4])[-\s/]?{_Y}", lambda m, _: _quarter(m)),
    (rf"{_Y}[-\s]?H(?P<h>[12])", lambda m, _: _half(m)),
    (rf"H(?P<h>[12])[-\s/]?{_Y}", lambda m, _: _half(m)),
    (rf"{_Y}[-/](?P<m>0?[1-9]|1[0-2])", lambda m, _: _month(int(m["y"]), int(m["m"]), m[0])),
    (rf"(?P<m>0?[1-9]|1[0-2])[/.]{_Y}", lambda m, _: _month(int(m["y"]), int(m["m"]), m[0])),
    (
        rf"{_MON_ANY},?\s+(?:of\s+|de\s+|del\s+)?{_Y}{_YEAR_WORD}",
        lambda m, _: _month(int(m["y"]), _mon(m), m.group(0)),
    ),
]


_WHOLE = [(re.compile(rf"^\s*{p}\s*$", re.IGNORECASE), b) for p, b in _FORMS]
_IN_TEXT = [
    (re.compile(rf"(?<![\w\-/.:]){p}(?![\w]|[-/.]\d)", re.IGNORECASE), b) for p, b in _FORMS
]
# Every form above names a year 19xx/20xx: one search rules out most non-dates at once.
_HAS_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# What every match of an _IN_TEXT form contains (a 19xx/20xx year, or the instant's
# four-digit year and dash): a text without it holds no date, found in one scan, not 14.
_MAY_HOLD_DATE = re.compile(r"(?:19|20)\d\d|\d{4}-")
_YEAR = re.compile(r"^\s*(?:FY\s?)?((?:19|20)\d\d)\s*$", re.IGNORECASE)
_RANGE = re.compile(
    r"^\s*(?:from\s+|between\s+)?(.+?)\s*(\.\.|\s(?:to|until|through|and|[-–—])\s|/|–|—)\s*(.+?)\s*$",
    re.IGNORECASE,
)


def _single(text: str, day_first: bool) -> DateSpan | None:
    for pattern, build in _WHOLE:
        m = pattern.match(text)
        if m:
            try:
                return build(m, day_first)
            except ValueError:  # 2026-02-30, week 53 of a short year
                return None
    return None


def year_span(value: Any) -> DateSpan | None:
    """A bare year (``2026``, ``FY2026``) as a period — only where the other side is a date.

    >>> year_span("2026").describe()
    '2026-01-01..2026-12-31'
    """
    m = _YEAR.match(str(value)) if isinstance(value, str | int) else None
    if not m or isinstance(value, bool):
        return None
    y = int(m.group(1))
    return DateSpan(date(y, 1, 1), date(y, 12, 31), "year", str(value))


def _join(first: DateSpan, last: DateSpan, raw: str) -> DateSpan | None:
    if last.end < first.start:
        return None
    return DateSpan(first.start, last.end, "range", raw)


def parse_date(value: Any, *, day_first: bool = False) -> DateSpan | None:
    """Read a whole value as a date, instant, period or range of dates, or None.

    >>> parse_date("March 2026").describe()
    '2026-03-01..2026-03-31'
    >>> parse_date("2026-Q1").describe()
    '2026-01-01..2026-03-31'
    >>> parse_date("01.03.2026").describe()
    '2026-03-01'
    >>> parse_date({"start": "2026-03-01", "end": "2026-03-31"}).describe()
    '2026-03-01..2026-03-31'
    """
    if type(value) is str:  # the common case first: ABC isinstance checks are slow
        return _parse_text(value, day_first)
    if isinstance(value, datetime):
        moment = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return DateSpan(moment.date(), moment.date(), "instant", value.isoformat(), moment)
    if isinstance(value, date):
        return DateSpan(value, value, "day", value.isoformat())
    if isinstance(value, Mapping):
        return _mapping_range(value, day_first)
    return _parse_text(value, day_first) if isinstance(value, str) else None


def _parse_text(value: str, day_first: bool) -> DateSpan | None:
    if len(value) > 80 or not _HAS_YEAR.search(value):
        return None
    found = _single(value, day_first)
    if found is not None:
        return found
    m = _RANGE.match(value)
    if m:
        first, last = _single(m.group(1), day_first), _single(m.group(3), day_first)
        if first is not None and last is not None:
            return _join(first, last, value)
    return None


def _mapping_range(value: Mapping[Any, Any], day_first: bool) -> DateSpan | None:
    if len(value) != 2:
        return None
    keys = {str(k).lower(): k for k in value}
    for low, high in _RANGE_KEYS:
        if low in keys and high in keys:
            first = parse_date(value[keys[low]], day_first=day_first)
            last = parse_date(value[keys[high]], day_first=day_first)
            if first is None or last is None:
                return None
            return _join(first, last, f"{value[keys[low]]}..{value[keys[high]]}")
    return None


# How far before its year a date in words may start ("miércoles, 30 de septiembre de "),
# and after it end ("2026 года").
_BEFORE_YEAR, _AFTER_YEAR = 48, 8


def _year_windows(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` around its years, merged where they overlap."""
    windows: list[tuple[int, int]] = []
    for year in _HAS_YEAR.finditer(text):
        start, end = max(0, year.start() - _BEFORE_YEAR), year.end() + _AFTER_YEAR
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def find_dates(text: str, *, day_first: bool = False) -> list[tuple[DateSpan, int, int]]:
    """Every date, period or range stated in free text, with its span (longest wins).

    >>> [(d.describe(), s) for d, s, _ in find_dates("refunds for March 2025, not 2026-03")]
    [('2025-03-01..2025-03-31', 12), ('2026-03-01..2026-03-31', 28)]
    """
    if not _MAY_HOLD_DATE.search(text):
        return []
    candidates: list[tuple[int, int, DateSpan]] = []
    windows = _year_windows(text)
    for pattern, build in _IN_TEXT:
        # A form naming its month in words is tried only just before a year: the month
        # names of four languages, tried at every position of a long record, cost more
        # than all the other forms together.
        spans = windows if "(?P<mon>" in pattern.pattern else [(0, len(text))]
        for start, end in spans:
            for m in pattern.finditer(text, start, end):
                try:
                    candidates.append((m.start(), m.end(), build(m, day_first)))
                except ValueError:
                    continue
    candidates.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    chosen: list[tuple[int, int, DateSpan]] = []
    for start, end, span in candidates:
        if chosen and start < chosen[-1][1]:
            continue
        if chosen and _RANGE_SEP.match(text[chosen[-1][1] : start]):
            prev_start, _, prev = chosen[-1]
            joined = _join(prev, span, text[prev_start:end])
            if joined is not None:
                chosen[-1] = (prev_start, end, joined)
                continue
        chosen.append((start, end, span))
    return [(span, start, end) for start, end, span in chosen]


def compare_dates(expected: DateSpan, actual: DateSpan, settings: CompareSettings) -> Comparison:
    """Same instant (within ``time_tol_seconds``) or the same first and last day.

    >>> s = CompareSettings()
    >>> compare_dates(parse_date("2026-03"), parse_date("March 2025"), s).same
    False
    """
    kind = "period" if expected.is_period or actual.is_period else "date"
    pair = f"{short(expected.raw)} {{}} {short(actual.raw)}"
    if expected.instant is not None and actual.instant is not None:
        tol = settings.time_tol_seconds
        delta = abs((expected.instant - actual.instant).total_seconds())
        same = delta <= tol
        op = ("==", "≤") if same else ("!=", ">")
        reason = pair.format(op[0]) + f" (|Δ|={delta:g}s {op[1]} time_tol {tol:g}s)"
        return Comparison(same, 1.0 if same else 0.0, "date", reason, tol)
    if (expected.instant is None) != (actual.instant is None):
        day, moment = (actual, expected) if expected.instant is not None else (expected, actual)
        if day.is_period or not settings.date_matches_datetime:
            same = False
        else:
            same = day.start == moment.start
        return Comparison(
            same,
            1.0 if same else 0.0,
            kind,
            pair.format("==" if same else "!=")
            + f" ({expected.describe()} vs {actual.describe()})",
        )
    same = expected.start == actual.start and expected.end == actual.end
    if same:
        return Comparison(True, 1.0, kind, pair.format("==") + f" (both {expected.describe()})")
    overlap = (min(expected.end, actual.end) - max(expected.start, actual.start)).days + 1
    union = (max(expected.end, actual.end) - min(expected.start, actual.start)).days + 1
    score = max(0.0, overlap / union) * 0.999
    return Comparison(
        False,
        score,
        kind,
        pair.format("!=") + f" ({expected.describe()} vs {actual.describe()})",
    )
