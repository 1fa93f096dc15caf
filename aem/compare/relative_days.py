"""Days named relative to today — "tomorrow", "nächsten Dienstag", "el próximo martes",
"в следующий вторник", "in 3 days" — read as the date they denote on the session's day.

Why: "Next Tuesday is 12 May 2026" after "Today is Thursday, 7 May 2026" states a date as
plainly as "2026-05-12" does, only relative to the day it is said. Unread, it was a
suspect in every correct session and a wrong weekday went through. The phrases are
CLDR's (:data:`aem.foundation.vocabulary.RELATIVE_DAYS`), so every read language has the same ones.

The session's day is what the agent was told ("Today is …"), else when the session ran;
the evaluator keeps it in the session's cache (:func:`set_session_day`), so a text read
outside an evaluation binds no relative day. A phrase whose readings disagree ("next
Tuesday" said on a Monday: tomorrow, or the Tuesday a week later?) is not read: a
relative day is a proof only where it names one day.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta

from aem.foundation.sessioncache import Slot, active_cache
from aem.foundation.vocabulary import COUNTS_AHEAD, DURATION_WORDS, RELATIVE_DAYS, alternation

_SESSION_DAY: Slot[date | None] = Slot("session day")

_PHRASE = re.compile(rf"(?<!\w)(?:{alternation(RELATIVE_DAYS)})(?!\w)", re.IGNORECASE)
# "in 3 days", "in 3 Tagen", "dentro de 3 días", "через 3 дня": CLDR's phrases for a count
# of days or weeks ahead (:data:`aem.foundation.vocabulary.COUNTS_AHEAD`), with a digit
# count (counts in words are not read). Whole words only: "within 5 days" is a bound, not
# the day in five days, and "Termin 3 Tage" holds no "in".
_IN = re.compile(
    r"(?<!\w)(?:"
    + "|".join(
        f"(?P<{unit}{i}>"
        + r"\s+".join(re.escape(word) for word in phrase.split()).replace(
            re.escape("{0}"), f"(?P<n_{unit}{i}>[1-9][0-9]?)"
        )
        + ")"
        for unit, phrases in COUNTS_AHEAD.items()
        for i, phrase in enumerate(phrases)
    )
    + r")(?!\w)",
    re.IGNORECASE,
)
# Every phrase above holds one of these words (a weekday, "tomorrow", a unit of "in 3
# days"): searched case-sensitively in the lower-cased text, far quicker than the phrases.
_ANCHOR = re.compile(
    r"(?<!\w)(?:"
    + alternation(
        {w for phrase in RELATIVE_DAYS for w in phrase.split() if len(w) > 3}
        | DURATION_WORDS["day"]
        | DURATION_WORDS["week"]
    )
    + r")(?!\w)"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*|[\"'«(]\s*)$")


def set_session_day(day: date | None) -> None:
    """Keep the session's day for the texts read during this evaluation."""
    cache = active_cache()
    if cache is not None:
        cache.put(_SESSION_DAY, day)


def session_day() -> date | None:
    """The day relative days are read against, when an evaluation set one."""
    cache = active_cache()
    return cache.get(_SESSION_DAY, lambda: None) if cache is not None else None


def resolve(phrase: str, today: date) -> date | None:
    """The one day ``phrase`` names on ``today``, or None when its readings disagree.

    >>> resolve("next Tuesday", date(2026, 5, 7)).isoformat()  # a Thursday
    '2026-05-12'
    >>> resolve("nächsten Dienstag", date(2026, 5, 11)) is None  # a Monday: ambiguous
    True
    >>> resolve("übermorgen", date(2026, 5, 7)).isoformat()
    '2026-05-09'
    """
    found = RELATIVE_DAYS.get(" ".join(phrase.lower().split()))
    if found is None:
        return None
    offset, weekday = found
    if weekday is None:
        return today + timedelta(days=offset)
    # CLDR's week reading: that weekday in the week ``offset`` weeks from this one.
    by_week = today + timedelta(days=weekday - today.weekday() + 7 * offset)
    # The everyday reading: the coming (next), the most recent (last) such weekday.
    ahead = (weekday - today.weekday()) % 7
    if offset > 0:
        nearest = today + timedelta(days=ahead or 7)
    elif offset < 0:
        nearest = today - timedelta(days=(today.weekday() - weekday) % 7 or 7)
    else:
        nearest = today + timedelta(days=ahead)
    return by_week if by_week == nearest else None


def find_relative_days(text: str, today: date) -> Iterator[tuple[date, int, int]]:
    """Every relative day in ``text`` that names one day on ``today``, with its span.

    A phrase CLDR writes in lower case that the text capitalises mid-sentence is another
    word ("Guten Morgen" is a greeting, "morgen" is tomorrow).
    """
    if not _ANCHOR.search(text.lower()):
        return  # no word any phrase holds: most texts, found in one quick scan
    for match in _PHRASE.finditer(text):
        said = match.group(0)
        if said[0].isupper() and not _SENTENCE_START.search(text[: match.start()]):
            continue
        day = resolve(said, today)
        if day is not None:
            yield day, match.start(), match.end()
    for match in _IN.finditer(text):
        count, unit = _count_and_unit(match)
        yield today + timedelta(days=count * (7 if unit == "week" else 1)), *match.span()


def stated_duration(said: str) -> tuple[int, str] | None:
    """The duration an "in N days" phrase states besides its day — ``(N, "day")`` or
    ``(N, "week")`` — or None for any other phrase.

    Why: "expect it back in 5 days" states the day five days on *and* the five days; a
    source may hold either ("ready_on": the day, "eta_days": 5).

    >>> stated_duration("in 5 Tagen"), stated_duration("dentro de 2 semanas")
    ((5, 'day'), (2, 'week'))
    >>> stated_duration("tomorrow") is None
    True
    """
    match = _IN.fullmatch(said.strip())
    return _count_and_unit(match) if match is not None else None


def _count_and_unit(match: re.Match[str]) -> tuple[int, str]:
    group = next(name for name, value in match.groupdict().items() if value and "_" not in name)
    return int(match[f"n_{group}"]), group.rstrip("0123456789")
