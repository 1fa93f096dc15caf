"""What a text states and what a record holds: the values a turn could see.

Why a module of its own: reading values (numbers, dates, ids, the key path a number sat
under, the length of a returned list) is one job; deciding whether a stated value is
supported (:mod:`aem.evidence.support`) and working it out from seen ones
(:mod:`aem.evidence.derivations`) are others, and both read what is gathered here.
Values are normalised (``$55`` is ``55.0``, ``May 20, 2024`` is ``2024-05-20``); digit
strings are also looked up verbatim, so ``7504069`` is said by ``certificate_7504069``.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timedelta
from typing import Any

from aem.compare.clock import keys_of_instant
from aem.compare.extract import StatedValue, extract_values
from aem.compare.relative_days import stated_duration
from aem.compare.settings import CompareSettings
from aem.evidence.arithmetic import evaluate
from aem.foundation.vocabulary import DURATION_WORDS, MONTH_NUMBERS, STOP_WORDS, alternation

_DIGITS = re.compile(r"\d+")
# A digit run this long said inside an id or a word supports the same number.
_VERBATIM_DIGITS = 4
# A bare digit run this long is an identifier (a tracking or card number): it must be
# said digit for digit, never "equal within a relative tolerance".
_LONG_DIGITS = 6
_BARE_DIGITS = re.compile(r"^\d+$")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
# A time written with a day offset, as schedules write an arrival after midnight:
# "00:00:00+1", "01:30 (+1)" — the day after the record's date.
_DAY_OFFSET = re.compile(r"(?<!\d)\d{1,2}:\d{2}(?::\d{2})?\s?\(?\+([1-3])\)?(?![\d:])")
# What a source's name ends with; a call's arguments and its result share the rest.
_SOURCE_PART = re.compile(r" (?:arguments|result)$")
# "24-hour" is "24 hours" said as an adjective: the count with its unit word.
# "2-year-old" is an age: the count alone ("kid age 2") states it.
_DURATION = re.compile(
    r"^(\d+)[-\s]?(hours?|days?|weeks?|months?|years?|minutes?|nights?|дн\w*|час\w*)"
    r"([-\s]old)?$",
    re.IGNORECASE,
)
# What a small integer counts: a plural noun right after it, perhaps past one word
# ("3 options", "4 free bags", "три варианта"). Without one it is list numbering, a
# step, an hour — not a claim worth checking.
_COUNTED_NOUN = re.compile(
    r"[ \t]+(?:[a-zа-яё]+[ \t]+)?(?P<noun>[a-z]{2,}s|[а-яё]{3,})\b", re.IGNORECASE
)
# Durations are arithmetic on dates ("it took 27 years"), not the length of a list.
_TIME_NOUNS = ("second", "minute", "hour", "day", "week", "month", "year", "decade", "night")
_MAX_COUNTED = 99
# "Total price: $503", "**Balance** — 171": the label a value is stated under, looked for
# within LABEL_REACH characters before it.
LABEL_REACH = 200
LABEL_BEFORE = re.compile(r"(?P<label>[^\W\d_][\w ]{1,30}?)[\s*_]*(?::|=|—|\bis\b)[\s*_$€£¥]*$")
# A JSON string token (in a text that parses as JSON, quotes outside strings start one).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# A \uXXXX escape behind any number of backslashes (a JSON string that holds JSON escapes
# its escapes once more: "\\u0435"), a UTF-16 surrogate pair read as one character.
_UNICODE_ESCAPE = re.compile(
    r"\\+u(?P<high>[dD][89abAB][0-9a-fA-F]{2})\\+u(?P<low>[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\+u(?P<code>[0-9a-fA-F]{4})"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_NESTED_JSON = 3  # levels of JSON inside JSON strings decoded, as keyed_quantities reads


def plain_text(text: str) -> str:
    """``text`` as a reader sees it: its JSON string escapes decoded.

    Why: Python's ``json.dumps`` writes a Cyrillic "е" as ``\\u0435``, and "435" read out
    of it made an invented "435 рублей" supported. A text that parses as JSON has every
    string token decoded (``\\u0435``, ``\\n``, ``\\"``; JSON inside a string too, a few
    levels deep); any ``\\uXXXX`` left, or in a text that is not JSON, is decoded on its
    own. Other backslashes of a text that is not JSON (``\\frac``, ``C:\\new``) stay.

    >>> plain_text('{"note": "\\\\u0446\\\\u0435\\\\u043d\\\\u0430\\\\n435"}')
    '{"note": "цена\\n435"}'
    >>> plain_text(r"not json: \\u0435 and \\frac{1}{2}")
    'not json: е and \\\\frac{1}{2}'
    """
    if "\\" not in text:
        return text
    return _UNICODE_ESCAPE.sub(_unescaped, _json_unescaped(text, 0))


def _json_unescaped(text: str, depth: int) -> str:
    """The string tokens of ``text`` decoded in place, if ``text`` is JSON (else as is):
    the numbers, keys and layout around them stay byte for byte."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return text
    return _JSON_STRING.sub(lambda token: _decoded_token(token.group(0), depth), text)


def _decoded_token(token: str, depth: int) -> str:
    """One JSON string token decoded, quotes kept; JSON it holds decoded in turn. A lone
    surrogate (half a character) stays escaped: it is no text a reader sees."""
    if "\\" not in token:
        return token
    decoded = json.loads(token)
    if _SURROGATE.search(decoded):
        return token
    if depth + 1 < _NESTED_JSON and "\\" in decoded and decoded.lstrip()[:1] in ("{", "["):
        decoded = _json_unescaped(decoded, depth + 1)
    return f'"{decoded}"'


def _unescaped(found: re.Match[str]) -> str:
    """The character a ``\\uXXXX`` escape (or a surrogate pair of two) stands for."""
    if found["code"] is not None:
        char = chr(int(found["code"], 16))
        return found.group(0) if _SURROGATE.match(char) else char
    high, low = int(found["high"], 16), int(found["low"], 16)
    return chr(0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00))


def noun_stem(noun: str) -> str:
    """What two spellings of one counted noun share ("flights", "flight" → ``flig``)."""
    return noun.lower()[:4]


def _day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def day_range(value: StatedValue) -> tuple[date, date]:
    """First and last day a date or period value covers."""
    assert isinstance(value.value, tuple)
    start, end = value.value
    return _day(start), _day(end)


def is_distinctive(value: StatedValue, text: str = "") -> bool:
    """Worth checking — the one notion both truthfulness and groundedness use: dates,
    ids, durations ("24-hour"), amounts with a unit, numbers of 100 and more, fractions;
    a small bare integer only where ``text`` (the text it was read from) says what it
    counts ("3 options": the length of a list the turn saw is a checkable fact). List
    numbering, steps and clock hours are not."""
    if value.kind != "number":
        return True
    number = value.number
    if value.unit is not None or abs(number) >= 100 or not number.is_integer():
        return True
    return counted_noun(value, text) is not None


def counted_noun(value: StatedValue, text: str) -> str | None:
    """The noun a small whole number counts in ``text`` ("3 options" → ``options``)."""
    if value.kind != "number":
        return None
    number = value.number
    if not number.is_integer() or not 2 <= number <= _MAX_COUNTED:
        return None
    if not text or text[value.start : value.end] != value.raw:
        return None
    found = _COUNTED_NOUN.match(text, value.end)
    noun = found.group("noun").lower() if found else ""
    if not noun or noun in STOP_WORDS or noun.startswith(_TIME_NOUNS):
        return None
    return noun


def said_at_boundary(raw: str, text: str) -> bool:
    """``raw`` occurs in ``text`` as a whole token: not inside a longer word or number
    ("4c" is not said by "14c", nor "ord-4" by "ord-42")."""
    at = text.find(raw)
    while at != -1:
        end = at + len(raw)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() and raw[0].isalnum()) and not (
            after.isalnum() and raw[-1].isalnum()
        ):
            return True
        at = text.find(raw, at + 1)
    return False


def _said_verbatim(digits: str, text: str) -> bool:
    """``re.search(digits + r"(?!\\d)", text)`` without compiling a pattern per number."""
    at = text.find(digits)
    while at != -1:
        end = at + len(digits)
        if end == len(text) or not text[end].isdecimal():  # what \d matches
            return True
        at = text.find(digits, at + 1)
    return False


def near_any(numbers: list[float], number: float, settings: CompareSettings) -> bool:
    """Whether sorted ``numbers`` holds ``number`` within the configured tolerance."""
    tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
    i = bisect.bisect_left(numbers, number - tolerance)
    return i < len(numbers) and numbers[i] <= number + tolerance


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number seen somewhere, with what makes it comparable to others.

    ``unit`` is its canonical unit or currency; ``key`` the JSON key it sat under (a
    result row's column: ``price``), if any; ``source`` names the text it came from;
    ``row`` the ids of the result row it belongs to (``hat069``), lower-cased.
    """

    value: float
    raw: str
    unit: str | None
    key: str | None
    source: str
    row: tuple[str, ...] = ()


@dataclass
class _DayOffsets:
    """The days a day-offset time moves a record to: an arrival at "00:00:00+1" in the
    result of a search for 2024-05-25 is on 2024-05-26. The date may be in the same text
    or in the call's arguments (a search's date is what it was asked for); each derived
    day is quoted as that date plus the offset."""

    dates: dict[str, list[tuple[date, date, str]]] = field(default_factory=dict)
    shifts: dict[str, set[int]] = field(default_factory=dict)

    def note(self, source: str, text: str, dates: list[tuple[date, date, str]]) -> None:
        call = _SOURCE_PART.sub("", source)
        self.dates.setdefault(call, []).extend(d for d in dates if d[0] == d[1])
        found = {int(m.group(1)) for m in _DAY_OFFSET.finditer(text)}
        if found:
            self.shifts.setdefault(call, set()).update(found)

    def days_after(self) -> list[tuple[date, date, str]]:
        derived = []
        for call, shifts in self.shifts.items():
            for day, _, raw in self.dates.get(call, []):
                for shift in sorted(shifts):
                    moved = day + timedelta(days=shift)
                    derived.append((moved, moved, f"{raw} +{shift} day (a time written +{shift})"))
        return derived


@dataclass
class SeenValues:
    """Normalised values from everything a turn could see."""

    numbers: list[float] = field(default_factory=list)
    dates: list[tuple[date, date, str]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    quantities: list[Quantity] = field(default_factory=list)
    # The length of each list a result returned and the number of documents each
    # retrieval returned, ``key`` naming the list: what a stated count may be.
    counts: list[Quantity] = field(default_factory=list)
    text: str = ""

    @classmethod
    def gather(
        cls,
        texts: Iterable[str | tuple[str, str]],
        settings: CompareSettings,
        *,
        keyed: bool = True,
    ) -> SeenValues:
        """Values of ``texts``; a ``(source, text)`` pair names where its numbers came
        from, so a derivation can say which tool result it used. ``keyed=False`` gathers
        only what a :class:`ValueIndex` looks up (it derives nothing): the numbers, ids
        and dates, without ``quantities`` (which only derivations read) or ``text``.

        Every value is read from the text as a reader sees it (:func:`plain_text`: JSON
        escapes decoded, so ``\\u0435`` is a letter, not the number 435); the JSON
        structure (key paths, list lengths, a calculator's expressions) from the text
        as written."""
        evidence = cls()
        chunks = []
        documents: dict[str, int] = {}
        offsets = _DayOffsets()
        for item in texts:
            source, text = item if isinstance(item, tuple) else ("input", item)
            if not text:
                continue
            plain = plain_text(text)
            if keyed:
                chunks.append(plain.lower())
                if source.endswith(" documents"):
                    documents[source] = documents.get(source, 0) + 1
            before = len(evidence.dates)
            evidence._add(plain, text, source, settings, keyed)
            offsets.note(source, plain, evidence.dates[before:])
        evidence.dates.extend(offsets.days_after())
        evidence.counts.extend(
            Quantity(float(n), f"{n} documents", None, "documents", source)
            for source, n in documents.items()
        )
        evidence.numbers.sort()
        evidence.text = "\n".join(chunks)
        return evidence

    def _add(
        self, text: str, written: str, source: str, settings: CompareSettings, keyed: bool
    ) -> None:
        """The values of ``text`` (decoded) and of the JSON structure of ``written``."""
        for value in extract_values(text, settings, words=True):
            if value.kind == "number":
                number = value.number
                self.numbers.append(number)
                if keyed:
                    self.quantities.append(Quantity(number, value.raw, value.unit, None, source))
            elif value.kind in ("date", "period"):
                first, last = day_range(value)
                self.dates.append((first, last, value.raw))
                for key in keys_of_instant(*value.value):  # type: ignore[misc]
                    self.ids.setdefault(key, value.raw)  # its day and time, said alone
            else:
                self.ids.setdefault(str(value.value), value.raw)
                runs = _DIGITS.findall(value.raw)
                if len(runs) == 1 and sum(c.isalpha() for c in value.raw) <= 2:
                    self.numbers.append(float(runs[0]))  # "14C": a number with a unit
        if written.lstrip()[:1] in ("{", "["):
            if keyed:
                self.quantities.extend(keyed_quantities(written, source, settings))
                self.counts.extend(list_lengths(written, source))
            for computed in arithmetic_results(written):
                self.numbers.append(computed.value)
                if keyed:
                    self.quantities.append(computed)

    def supports(
        self, value: StatedValue, settings: CompareSettings, *, date_slack_days: int = 0
    ) -> bool:
        """The value was seen as such (normalised; dates within the slack). A value
        derived from seen ones is :func:`derive`'s question: it needs the claim's words."""
        if value.kind == "number":
            if _is_long_run(value):  # a tracking number: digit for digit
                return _exact(self.numbers, value) or _digits_said(value.raw, self.text)
            return self._supports_number(value.number, value.raw, settings)
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            slack = timedelta(days=date_slack_days)
            if any(es - slack <= e and s <= ee + slack for es, ee, _ in self.dates):
                return True
            # "May 20th" in a user message states the day without a year; a date that
            # states its year may not take it from the same day of another year.
            # A full date is strict (a relative day too: "next Tuesday" names its year).
            strict = value.kind == "date" or bool(_YEAR.search(value.raw))
            if s == e and day_without_year(s, self, strict=strict):
                return True
            # "in 5 days" states the five days too, which a record may hold ("eta_days": 5).
            ahead = stated_duration(value.raw) if value.kind == "date" else None
            return ahead is not None and self._duration_said(*ahead)
        duration = _DURATION.match(value.raw.strip()) if value.kind == "id" else None
        if duration is not None:
            number, unit = duration.group(1), duration.group(2).lower()[:3]
            if duration.group(3):  # an age
                return re.search(rf"(?<![\d.,]){number}(?![\d.,]?\d)", self.text) is not None
            return _said_beside(number, re.escape(unit), self.text)
        if str(value.value) in self.ids or said_at_boundary(value.raw.lower(), self.text):
            return True
        # "22C", "5kg": a number with a unit glued on, which the text extractor reads as
        # an id; the seen number supports it.
        letters = sum(c.isalpha() for c in value.raw)
        runs = _DIGITS.findall(value.raw)
        return (
            letters <= 2
            and len(runs) == 1
            and self._supports_number(float(runs[0]), runs[0], settings)
        )

    def _duration_said(self, count: int, unit: str) -> bool:
        """``count`` days or weeks said in what the turn saw, in any read language: beside
        its unit ("5 days", "5 Tagen", "5-day"; a week also as its seven days) or under a key
        naming the unit (``"eta_days": 5``). A bare 5 elsewhere is no duration."""
        for number, name in [(count, unit)] + ([(count * 7, "day")] if unit == "week" else []):
            words = alternation(DURATION_WORDS[name])
            keyed = rf"(?<![^\W_])(?:{words})(?![^\W_])\w*[\"']?\s*[:=]\s*{number}(?![.,]?\d)"
            if _said_beside(str(number), rf"(?i:{words})(?!\w)", self.text) or re.search(
                keyed, self.text, re.IGNORECASE
            ):
                return True
        return False

    def _supports_number(self, number: float, raw: str, settings: CompareSettings) -> bool:
        # A refund of $331 is the ``"amount": -331`` of the payment history.
        if near_any(self.numbers, number, settings) or near_any(self.numbers, -number, settings):
            return True
        # A long digit run said verbatim inside an id (``certificate_7504069``), or as the
        # end of one ("the card ending in 3957" for ``credit_card_8003957``).
        digits = "".join(_DIGITS.findall(raw))
        return len(digits) >= _VERBATIM_DIGITS and _said_verbatim(digits, self.text)

    def text_at_hand(self) -> str | None:
        """The seen text, where reading it costs nothing more (see :class:`IndexedSeenValues`)."""
        return self.text

    def states(self, value: StatedValue, settings: CompareSettings) -> bool:
        """The value itself was said (no derivation, no slack): for coverage checks."""
        if value.kind == "number":
            return near_any(self.numbers, value.number, settings)
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            return any(es <= s and e <= ee for es, ee, _ in self.dates)
        return str(value.value) in self.ids or said_at_boundary(value.raw.lower(), self.text)

    def closest(self, value: StatedValue) -> str | None:
        """The nearest evidence of the same kind, to quote in an explanation."""
        if value.kind == "number" and self.numbers:
            number = value.number
            return f"{min(self.numbers, key=lambda n: abs(n - number)):g}"
        if value.kind in ("date", "period") and self.dates:
            start = day_range(value)[0]
            return min(self.dates, key=lambda d: abs((d[0] - start).days))[2]
        if value.kind in ("id", "time", "day") and self.ids:
            close = difflib.get_close_matches(value.raw, list(self.ids.values()), n=1, cutoff=0)
            return close[0] if close else None
        return None


def _is_long_run(value: StatedValue) -> bool:
    """A bare run of six or more digits (no unit, no separators, no decimals)."""
    return (
        value.unit is None
        and len(value.raw) >= _LONG_DIGITS
        and bool(_BARE_DIGITS.match(value.raw))
    )


def _digits_said(digits: str, text: str) -> bool:
    """``digits`` in ``text`` with no digit either side (``certificate_7504069`` says
    7504069; ``17504069`` does not)."""
    return re.search(rf"(?<!\d){digits}(?!\d)", text) is not None


def _exact(numbers: list[float], value: StatedValue) -> bool:
    number = value.number
    i = bisect.bisect_left(numbers, number)
    return i < len(numbers) and numbers[i] == number


_MONTH_NAMES_OF = {
    month: alternation(name for name, number in MONTH_NUMBERS.items() if number == month)
    for month in range(1, 13)
}


def day_without_year(day: date, seen: SeenValues, *, strict: bool = True) -> bool:
    """The context names this day and month without a year ("on 12 June", "12 июня",
    "12.06") and — ``strict``, for a stated date with a year — no dated mention of the
    same day in another year: the year was inferred, not changed."""
    if strict and any(
        s.month == day.month and s.day == day.day and s.year != day.year for s, _, _ in seen.dates
    ):
        return False
    names = _MONTH_NAMES_OF[day.month]  # of every read language: "Mai", "mayo", "мая"
    forms = (
        rf"(?<![\d.]){day.day}(?:st|nd|rd|th|\.)? (?:of |de )?(?:{names})(?!\w)",
        rf"(?<!\w)(?:{names})\.? {day.day}(?:st|nd|rd|th)?(?!\d)",
        rf"(?<![\d.]){day.day:02d}\.{day.month:02d}(?![\d]|\.\d)",
    )
    return any(re.search(form, seen.text) for form in forms)


def list_lengths(text: str, source: str) -> list[Quantity]:
    """The length of every list of two or more items in a JSON text, keyed by the path
    it sits under (``flights``, ``reservation.passengers``; ``None`` for a top-level list):
    the counts a stated "3 options" may be."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return []
    found: list[Quantity] = []
    stack: list[tuple[Any, str | None]] = [(parsed, None)]
    while stack:
        item, key = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, f"{key}.{k}" if key else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            if len(item) >= 2:
                found.append(Quantity(float(len(item)), f"{len(item)} items", None, key, source))
            stack.extend((v, key) for v in item)
    return found


_ARITHMETIC = re.compile(r"^[\d\s.+\-*/()]+$")
# What every string arithmetic_results reads contains: a JSON string of _ARITHMETIC's
# characters with an operator in it (one search, not a match per string of the text).
_MAY_HOLD_ARITHMETIC = re.compile(r'"[\d\s.()]*[+\-*/][\d\s.+\-*/()]*"')


def arithmetic_results(text: str) -> list[Quantity]:
    """Every intermediate result of arithmetic written in a JSON text's strings
    (``{"expression": "364 + (210 + 370)"}`` → 580 and 944).

    Why: an agent that hands a calculator ``(210 + 370)`` and then states $580 computed
    it in the open; each sub-expression is a value it saw, not a coincidence.
    """
    found: list[Quantity] = []
    if not _MAY_HOLD_ARITHMETIC.search(text):
        return found
    for string in re.findall(r'"((?:[^"\\]|\\.)*)"', text):
        if not _ARITHMETIC.match(string) or not any(op in string for op in "+-*/"):
            continue
        try:
            tree = ast.parse(string.strip(), mode="eval")
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            value = evaluate(node) if isinstance(node, ast.BinOp) else None
            if value is not None:
                found.append(Quantity(value, f"{value:g}", None, None, f"arithmetic '{string}'"))
    return found


def _said_beside(number: str, unit: str, text: str) -> bool:
    """``number`` said right before its unit (``unit`` a pattern) in ``text``: "24 hours",
    "24-hour", "5 Tagen" — not the end of another number ("1.24 hours")."""
    return re.search(rf"(?<![\d.,]){number}\s*-?\s*{unit}", text) is not None


def keyed_quantities(text: str, source: str, settings: CompareSettings) -> list[Quantity]:
    """Numbers of a JSON text with the key path each sat under (``{"prices": {"economy":
    105}}`` → ``prices.economy``; list items share their list's path, as rows share columns).

    JSON strings that hold JSON (a tool result inside a message) are read too.
    """
    try:
        parsed = json.loads(text)
    except ValueError:
        return []
    found: list[Quantity] = []
    stack: list[tuple[Any, str | None, int, tuple[str, ...]]] = [(parsed, None, 0, ())]
    while stack:
        item, key, depth, row = stack.pop()
        if isinstance(item, dict):
            if key is None or key.rsplit(".", 1)[-1].startswith("#"):
                row = _row_ids(item) or row  # a list item (or the whole result) is a row
            stack.extend((v, f"{key}.{k}" if key else str(k), depth, row) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(
                (v, f"{key}.#{i}" if key else f"#{i}", depth, row) for i, v in enumerate(item)
            )
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            found.append(Quantity(float(item), str(item), None, key, source, row))
        elif isinstance(item, str) and depth < 3 and item.lstrip()[:1] in ("{", "["):
            try:
                stack.append((json.loads(item), key, depth + 1, row))
            except ValueError:
                continue
        elif isinstance(item, str) and key is not None and len(item) <= 64:
            for value in extract_values(item, settings):
                if value.kind == "number":
                    number = value.number
                    found.append(Quantity(number, value.raw, value.unit, key, source, row))
    return found


_ROW_ID = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[\w-]{4,32}$")


def _row_ids(row: dict[str, Any]) -> tuple[str, ...]:
    """The id-like strings of a result row (``HAT069``, ``credit_card_4421486``: letters
    and digits, no spaces), by which an answer names the row."""
    return tuple(v.lower() for v in row.values() if isinstance(v, str) and _ROW_ID.match(v))


# --- values of many sources, looked up by value -----------------------------------------
_TRIES = 8  # producers of one value asked about before the full evidence decides


class ValueIndex:
    """Which sources (turns) produced each normalised value: numbers, ids, date ranges.

    Why: a turn's evidence holds the values of all its ancestors, and in a long session
    that is nearly every earlier turn; gathering it per turn is quadratic. Each source's
    values are extracted once here, and a stated value is looked up in the index and
    accepted when one of its producers is visible to the asking turn (an ancestor). The
    lookup only ever says "supported" where :meth:`SeenValues.supports` would too (the
    same comparisons on a subset of the evidence); anything else falls back to the full
    evidence, so verdicts do not change.
    """

    def __init__(self) -> None:
        self.numbers: dict[float, list[tuple[int, str]]] = {}
        self.ids: dict[str, list[tuple[int, str]]] = {}
        self.dates: dict[tuple[date, date], list[tuple[int, str]]] = {}
        self._keys: list[float] = []

    def add(self, order: int, source: str, values: SeenValues) -> None:
        """Index ``values`` as produced by ``source`` at ``order`` (added in order)."""
        entry = (order, source)
        for number in set(values.numbers):
            self.numbers.setdefault(number, []).append(entry)
        for key in values.ids:
            self.ids.setdefault(key, []).append(entry)
        for first, last, _ in values.dates:
            self.dates.setdefault((first, last), []).append(entry)
        self._keys = []

    def supports(
        self,
        value: StatedValue,
        settings: CompareSettings,
        *,
        before: int,
        visible: Callable[[str], bool],
        date_slack_days: int = 0,
    ) -> bool:
        """Whether a source ordered before ``before`` that ``visible`` accepts produced a
        value supporting ``value``; False means "not found here", not "unsupported"."""
        for producers in self._producers(value, settings, date_slack_days):
            latest = bisect.bisect_left(producers, (before, ""))
            for _order, source in reversed(producers[max(0, latest - _TRIES) : latest]):
                if visible(source):
                    return True
        return False

    def _producers(
        self, value: StatedValue, settings: CompareSettings, slack: int
    ) -> Iterator[list[tuple[int, str]]]:
        if value.kind == "number" and _is_long_run(value):
            yield from (self.numbers[n] for n in {value.number} if n in self.numbers)
        elif value.kind == "number":
            yield from self._near(value.number, settings)
        elif value.kind in ("date", "period"):
            start, end = day_range(value)
            for shift in range(-slack, slack + 1):
                moved = (start + timedelta(days=shift), end + timedelta(days=shift))
                if moved in self.dates:
                    yield self.dates[moved]
        elif not _DURATION.match(value.raw.strip()):
            if str(value.value) in self.ids:
                yield self.ids[str(value.value)]
            runs = _DIGITS.findall(value.raw)
            if sum(c.isalpha() for c in value.raw) <= 2 and len(runs) == 1:
                yield from self._near(float(runs[0]), settings)

    def _near(self, number: float, settings: CompareSettings) -> Iterator[list[tuple[int, str]]]:
        """Producers of the seen numbers within tolerance of ``number`` or ``-number``
        (as :meth:`SeenValues._supports_number` compares them)."""
        if not self._keys:
            self._keys = sorted(self.numbers)
        tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
        for target in (number, -number):
            i = bisect.bisect_left(self._keys, target - tolerance)
            while i < len(self._keys) and self._keys[i] <= target + tolerance:
                yield self.numbers[self._keys[i]]
                i += 1


_FIELDS = frozenset(f.name for f in fields(SeenValues))


class IndexedSeenValues(SeenValues):
    """A turn's evidence as ``common`` values (the task, the facts), the values of
    visible sources in a :class:`ValueIndex` (``indexed``) and its own ``inputs``; the
    full :class:`SeenValues` is made (by ``full``) only when a question needs it: a value
    no part supports, or a derivation or the closest value, which read every seen value.
    Parts are asked cheapest first, and each is made on first need."""

    def __init__(
        self,
        common: SeenValues,
        indexed: Callable[[StatedValue, CompareSettings, int], bool],
        inputs: Callable[[], SeenValues],
        full: Callable[[], SeenValues],
    ) -> None:
        self._common = common
        self._indexed = indexed
        self._inputs: Callable[[], SeenValues] | SeenValues = inputs
        self._full = full
        self._made: SeenValues | None = None

    def materialised(self) -> SeenValues:
        """The full evidence, gathered on first need."""
        if self._made is None:
            self._made = self._full()
        return self._made

    @property
    def text(self) -> str:  # type: ignore[override]
        """Everything the turn saw, gathered on first need: the base class's empty default
        would otherwise answer for it."""
        return self.materialised().text

    def text_at_hand(self) -> str | None:
        """The seen text only once the full evidence was gathered: telling "said
        verbatim" from "equal within tolerance" is not worth gathering it."""
        return self._made.text if self._made is not None else None

    def __getattr__(self, name: str) -> Any:
        if name in _FIELDS:
            return getattr(self.materialised(), name)
        raise AttributeError(name)

    def supports(
        self, value: StatedValue, settings: CompareSettings, *, date_slack_days: int = 0
    ) -> bool:
        slack = date_slack_days
        if self._common.supports(value, settings, date_slack_days=slack):
            return True
        if self._indexed(value, settings, slack):
            return True
        if self._made is None:
            if not isinstance(self._inputs, SeenValues):
                self._inputs = self._inputs()
            if self._inputs.supports(value, settings, date_slack_days=slack):
                return True
        return self.materialised().supports(value, settings, date_slack_days=slack)
