"""Relative periods in the user's words, bound to the session's date.

Why: "last quarter" is a fact the user states as plainly as "Q1 2026" — only relative to
the day they said it. Bound to the session's date (a "today is …" in what the agent was
told, else when the session ran), it makes "Q1 2025" for "last quarter" on 2026-04-10 a
contradiction and "Q1 2026" a pass, for months, quarters, halves, weeks and years alike;
"за март" is the latest March that has begun (an English month without a year may lie
ahead or behind, so it binds nothing). Only a stated period of the same length
binds to one (a quarter to a quarter): any other date the agent mentions is not about it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from aem.compare.dates import find_dates
from aem.foundation.model import Session
from aem.foundation.vocabulary import MONTHS_RU_GENITIVE

_TODAY = re.compile(
    r"(?:today(?:'s date)? is|current date(?: is)?|date today:?|heute ist|hoy es|сегодня)"
    r"\s*:?\s*",
    re.IGNORECASE,
)
_TODAY_REACH = 48  # the date follows its cue: "Today is Thursday, 7 May 2026"
_LAST = r"(?:last|previous|past|прошл\w*|предыдущ\w*)"
_THIS = r"(?:this|current|эт\w*|текущ\w*)"
_UNITS = {
    "quarter": "quarter",
    "квартал": "quarter",
    "month": "month",
    "месяц": "month",
    "week": "week",
    "недел": "week",
    "year": "year",
    "год": "year",
    "half": "half",
    "полугод": "half",
}
_RELATIVE = re.compile(
    rf"\b(?P<which>{_LAST}|{_THIS})\s+(?P<unit>quarter|month|week|year|half|квартал|месяц"
    r"|недел|полугод|год)\w*",
    re.IGNORECASE,
)
_MONTH_RU = {name: i for i, name in enumerate(MONTHS_RU_GENITIVE, start=1)}
# "за март" is a report's month, always one that has begun; "in May" may be a trip
# ahead or a month past, so an English month without a year binds nothing.
_FOR_MONTH = re.compile(r"(?<!\w)за\s+(?P<month>[а-яё]+)(?!\w)(?!\s*,?\s*\d)", re.IGNORECASE)
_RU_MONTH_STEMS = {name[:3]: i for name, i in _MONTH_RU.items()} | {"май": 5, "мае": 5}


@dataclass(frozen=True, slots=True)
class RelativePeriod:
    """What the user said ("last quarter"), and the days it covers on the session's date."""

    said: str
    start: date
    end: date
    granularity: str

    def holds(self, start: date, end: date) -> bool:
        """Whether a stated period lies within this one."""
        return self.start <= start and end <= self.end

    def binds(self, start: date, end: date) -> bool:
        """Whether a stated period is of this one's length (a quarter for a quarter)."""
        length = (end - start).days
        return abs(length - (self.end - self.start).days) <= 3


def session_date(texts: Iterable[str], fallback: date | None) -> date | None:
    """The date the session says it is ("Today is 2026-04-10"), else ``fallback``."""
    for text in texts:
        for cue in _TODAY.finditer(text):
            following = text[cue.end() : cue.end() + _TODAY_REACH]
            for span, _, _ in find_dates(following):
                if not span.is_period:
                    return span.start
    return fallback


def day_of_session(session: Session, task_texts: Iterable[str] = ()) -> date | None:
    """The session's day: a "today is" in the task or what its first turns were told,
    else the day its first span started (UTC)."""
    started = [s.start_unix_nano for s in session.spans if s.start_unix_nano > 0]
    fallback = datetime.fromtimestamp(min(started) / 1e9, tz=UTC).date() if started else None
    told = [text for turn in session.turns[:3] for text in turn.seen_inputs]
    return session_date([*task_texts, *told], fallback)


def relative_periods(texts: Iterable[str], today: date) -> list[RelativePeriod]:
    """The relative periods the user's ``texts`` state, bound to ``today``.

    >>> [(p.said, p.start.isoformat(), p.end.isoformat())
    ...  for p in relative_periods(["Sum my expenses for last quarter"], date(2026, 4, 10))]
    [('last quarter', '2026-01-01', '2026-03-31')]
    """
    found: list[RelativePeriod] = []
    for text in texts:
        for match in _RELATIVE.finditer(text):
            unit = next(u for k, u in _UNITS.items() if match["unit"].lower().startswith(k))
            back = 0 if re.match(_THIS, match["which"], re.IGNORECASE) else 1
            found.append(_period(match.group(0), unit, back, today))
        found.extend(_named_months(text, today))
    return list(dict.fromkeys(found))


def _period(said: str, unit: str, back: int, today: date) -> RelativePeriod:
    """The ``unit`` ``back`` units before the one holding ``today``."""
    if unit == "week":
        start = today - timedelta(days=today.weekday() + 7 * back)
        return RelativePeriod(said, start, start + timedelta(days=6), unit)
    if unit == "year":
        year = today.year - back
        return RelativePeriod(said, date(year, 1, 1), date(year, 12, 31), unit)
    months = {"month": 1, "quarter": 3, "half": 6}[unit]
    index = (today.year * 12 + today.month - 1) // months - back
    first = index * months
    start = date(first // 12, first % 12 + 1, 1)
    last = first + months
    end = date(last // 12, last % 12 + 1, 1) - timedelta(days=1)
    return RelativePeriod(said, start, end, unit)


def _named_months(text: str, today: date) -> list[RelativePeriod]:
    """ "за март" without a year: the latest such month that has begun."""
    found = []
    for match in _FOR_MONTH.finditer(text):
        word = match["month"].lower()
        month = _MONTH_RU.get(word) or _ru_month(word)
        if month is None:
            continue
        year = today.year if month <= today.month else today.year - 1
        start = date(year, month, 1)
        end = _period("", "month", 0, start).end
        found.append(RelativePeriod(match.group(0), start, end, "month"))
    return found


def _ru_month(word: str) -> int | None:
    """A Russian month in any case ("март", "марта", "марте")."""
    if not re.match(r"^[а-яё]{3,8}$", word):
        return None
    month = _RU_MONTH_STEMS.get(word[:3])
    if month is None or (word[:3] in ("мар",) and not word.startswith("март")):
        return None
    return month
