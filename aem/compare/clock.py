"""Times of day and days named without a year, as canonical keys.

Why: "Arrival: 08:30 PM" read as numbers states an ``8`` that no flight record holds
(``scheduled_arrival_time_est: 20:30:00``), and "SEA to JFK on May 26" states a ``26``
that no ``2024-05-26`` holds. Read as what they are, a time of day and a day of the
year, both compare exactly: ``time:20:30`` and ``day:05-26``, whatever the clock format
or month spelling. A day named without its year is only ever compared by month and day.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime

from aem.foundation.vocabulary import (
    MONTH_ABBREVIATIONS_EN,
    MONTHS_EN_PATTERN,
    MONTHS_RU_GENITIVE,
    capitalised_alternation,
)

_CLOCK = re.compile(
    r"(?<![\d:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d)(?:\.\d+)?)?(?![\d:])"
    r"(?:\s?(?P<half>[ap]\.?\s?m\.?)(?![a-z]))?",
    re.IGNORECASE,
)
# English month names are capitalised in prose ("May 26"); "may" alone is a verb.
_MONTHS_EN = capitalised_alternation(MONTHS_EN_PATTERN)
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_NO_YEAR = r"(?![\w:])(?!,?\s*(?:19|20)\d\d)"
_MONTH_DAY = re.compile(rf"(?<![\w-])(?P<mon>(?:{_MONTHS_EN})\.?)\s+{_DAY}{_NO_YEAR}")
_DAY_MONTH = re.compile(
    rf"(?<![\w.,/-]){_DAY}\s+(?:of\s+)?(?P<mon>(?:{_MONTHS_EN})\.?|{'|'.join(MONTHS_RU_GENITIVE)})"
    rf"(?!\w){_NO_YEAR}"
)


# "11am", "7 p.m.": an hour of a 12-hour clock without minutes.
_HOUR = re.compile(r"(?<![\w:.])(?P<h>1[0-2]|0?[1-9])\s?(?P<half>[ap])\.?m\b\.?", re.IGNORECASE)
# What every match of _CLOCK (a digit, ':', a digit 0-5) or _HOUR (a digit, then "am"/"pm"
# with an optional space and dot) contains: a text without it holds no time, found in
# one scan with no look-behind to try at every position.
_MAY_HOLD_TIME = re.compile(r"\d(?::[0-5]|\s?[ap]\.?m)", re.IGNORECASE)
# What every match of _MONTH_DAY or _DAY_MONTH contains: a month's name (the English
# ones capitalised, as the patterns want them).
_MAY_HOLD_DAY = re.compile(rf"{_MONTHS_EN}|{'|'.join(MONTHS_RU_GENITIVE)}")


def time_key(hour: int, minute: int) -> str:
    """The canonical key of a time of day."""
    return f"time:{hour:02d}:{minute:02d}"


def day_key(month: int, day: int) -> str:
    """The canonical key of a day of the year (no year)."""
    return f"day:{month:02d}-{day:02d}"


def find_times(text: str) -> Iterator[tuple[str, int, int]]:
    """Clock times in ``text`` (``08:30 PM``, ``20:30``, ``06:00:00``, ``11am``) as
    ``(key, start, end)``; a 12-hour time with AM/PM is turned into 24 hours."""
    if not _MAY_HOLD_TIME.search(text):
        return
    for match in [*_CLOCK.finditer(text), *_HOUR.finditer(text)]:
        hour = int(match["h"])
        minute = int(match["m"]) if "m" in match.groupdict() else 0
        half = (match["half"] or "").lower()[:1]
        if half and not 1 <= hour <= 12:
            continue
        if half == "p" and hour != 12:
            hour += 12
        elif half == "a" and hour == 12:
            hour = 0
        yield time_key(hour, minute), match.start(), match.end()


def _month_number(name: str) -> int:
    lowered = name.lower().rstrip(".")
    if lowered in MONTHS_RU_GENITIVE:
        return MONTHS_RU_GENITIVE.index(lowered) + 1
    return MONTH_ABBREVIATIONS_EN.index(lowered[:3]) + 1


def find_days(text: str) -> Iterator[tuple[str, int, int]]:
    """Days named by month and day without a year ("May 26", "26th of May", "26 мая")
    as ``(key, start, end)``; impossible days (``Feb 31``) are skipped."""
    if not _MAY_HOLD_DAY.search(text):
        return
    for pattern in (_MONTH_DAY, _DAY_MONTH):
        for match in pattern.finditer(text):
            month, day = _month_number(match["mon"]), int(match["d"])
            try:
                date(2000, month, day)  # a leap year: Feb 29 is a day
            except ValueError:
                continue
            yield day_key(month, day), match.start(), match.end()


def keys_of_instant(first: date | datetime, last: date | datetime) -> list[str]:
    """The day key of a one-day date, and the time key of an instant too."""
    keys: list[str] = []
    first_day = first.date() if isinstance(first, datetime) else first
    last_day = last.date() if isinstance(last, datetime) else last
    if first_day == last_day:
        keys.append(day_key(first_day.month, first_day.day))
    if isinstance(first, datetime) and first == last:
        keys.append(time_key(first.hour, first.minute))
    return keys
