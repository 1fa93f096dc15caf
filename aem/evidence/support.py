"""Evidence a turn could see, and whether a stated value is supported by it.

Used by ``correctness.truthfulness``: a number, date or id that a reasoning or answer turn
states must appear in what that turn could see — its model input (user messages, system
prompt, history), the results of tool calls among its ancestors in the turn graph, the
documents of ancestor retrievals — or in the case's facts. Values are compared after
normalisation (``$55`` is supported by a tool result ``55.0``, ``May 20, 2024`` by
``2024-05-20``); digit strings are also looked up verbatim, so ``7504069`` is supported
by ``certificate_7504069``.
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
from typing import Any, Literal

from aem.compare.clock import keys_of_instant
from aem.compare.extract import StatedValue, extract_values
from aem.compare.numbers import parse_number
from aem.compare.settings import CompareSettings
from aem.evidence.arithmetic import evaluate, written_result
from aem.vocabulary import (
    CURRENCY_CODES,
    DOCUMENT_NOUNS,
    MONTHS_EN,
    MONTHS_RU_GENITIVE,
    NUMBER_WORDS,
    STOP_WORDS,
)

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
    number = float(value.value)  # type: ignore[arg-type]
    if value.unit is not None or abs(number) >= 100 or not number.is_integer():
        return True
    return counted_noun(value, text) is not None


def counted_noun(value: StatedValue, text: str) -> str | None:
    """The noun a small whole number counts in ``text`` ("3 options" → ``options``)."""
    if value.kind != "number":
        return None
    number = float(value.value)  # type: ignore[arg-type]
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
        and dates, without ``quantities`` (which only derivations read) or ``text``."""
        evidence = cls()
        chunks = []
        documents: dict[str, int] = {}
        offsets = _DayOffsets()
        for item in texts:
            source, text = item if isinstance(item, tuple) else ("input", item)
            if not text:
                continue
            if keyed:
                chunks.append(text.lower())
                if source.endswith(" documents"):
                    documents[source] = documents.get(source, 0) + 1
            before = len(evidence.dates)
            evidence._add(text, source, settings, keyed)
            offsets.note(source, text, evidence.dates[before:])
        evidence.dates.extend(offsets.days_after())
        evidence.counts.extend(
            Quantity(float(n), f"{n} documents", None, "documents", source)
            for source, n in documents.items()
        )
        evidence.numbers.sort()
        evidence.text = "\n".join(chunks)
        return evidence

    def _add(self, text: str, source: str, settings: CompareSettings, keyed: bool) -> None:
        for value in extract_values(text, settings, words=True):
            if value.kind == "number":
                number = float(value.value)  # type: ignore[arg-type]
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
        if text.lstrip()[:1] in ("{", "["):
            if keyed:
                self.quantities.extend(keyed_quantities(text, source, settings))
                self.counts.extend(list_lengths(text, source))
            for computed in arithmetic_results(text):
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
            return self._supports_number(float(value.value), value.raw, settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            slack = timedelta(days=date_slack_days)
            if any(es - slack <= e and s <= ee + slack for es, ee, _ in self.dates):
                return True
            # "May 20th" in a user message states the day without a year; a date that
            # states its year may not take it from the same day of another year.
            return s == e and day_without_year(s, self, strict=bool(_YEAR.search(value.raw)))
        duration = _DURATION.match(value.raw.strip()) if value.kind == "id" else None
        if duration is not None:
            number, unit = duration.group(1), duration.group(2).lower()[:3]
            if duration.group(3):  # an age
                return re.search(rf"(?<![\d.,]){number}(?![\d.,]?\d)", self.text) is not None
            return re.search(rf"(?<!\d){number}\s*-?\s*{unit}", self.text) is not None
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
            return near_any(self.numbers, float(value.value), settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            return any(es <= s and e <= ee for es, ee, _ in self.dates)
        return str(value.value) in self.ids or said_at_boundary(value.raw.lower(), self.text)

    def closest(self, value: StatedValue) -> str | None:
        """The nearest evidence of the same kind, to quote in an explanation."""
        if value.kind == "number" and self.numbers:
            number = float(value.value)  # type: ignore[arg-type]
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
    number = float(value.value)  # type: ignore[arg-type]
    i = bisect.bisect_left(numbers, number)
    return i < len(numbers) and numbers[i] == number


def day_without_year(day: date, seen: SeenValues, *, strict: bool = True) -> bool:
    """The context names this day and month without a year ("on 12 June", "12 июня",
    "12.06") and — ``strict``, for a stated date with a year — no dated mention of the
    same day in another year: the year was inferred, not changed."""
    if strict and any(
        s.month == day.month and s.day == day.day and s.year != day.year for s, _, _ in seen.dates
    ):
        return False
    en, ru = MONTHS_EN[day.month - 1], MONTHS_RU_GENITIVE[day.month - 1]
    forms = (
        rf"\b{day.day}(?:st|nd|rd|th)? (?:of )?(?:{en}|{en[:3]})\b",
        rf"\b(?:{en}|{en[:3]}) {day.day}(?:st|nd|rd|th)?\b",
        rf"(?<!\d){day.day} {ru}",
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
                    number = float(value.value)  # type: ignore[arg-type]
                    found.append(Quantity(number, value.raw, value.unit, key, source, row))
    return found


_ROW_ID = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[\w-]{4,32}$")


def _row_ids(row: dict[str, Any]) -> tuple[str, ...]:
    """The id-like strings of a result row (``HAT069``, ``credit_card_4421486``: letters
    and digits, no spaces), by which an answer names the row."""
    return tuple(v.lower() for v in row.values() if isinstance(v, str) and _ROW_ID.match(v))


def _named_rows(pool: list[Quantity], text: str) -> list[Quantity]:
    """The pool's values from rows ``text`` names by an id, or the whole pool when it
    names none: "the total of your two flights" over HAT069 and HAT251 adds their prices,
    not any two prices of a 20-row search result."""
    lowered = text.lower()
    named = [q for q in pool if q.source == _OWN or any(i in lowered for i in q.row)]
    return named if any(q.source != _OWN for q in named) else pool


# --- derived values -----------------------------------------------------------------------
# A derived value is accepted only where the claim reads as the aggregate it is: a total
# is a sum (or a count times an amount), a balance or refund a difference, a per-unit
# amount a quotient; written arithmetic ("$105 + $190 = $295") may be any of them.
_CUES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(
            r"\b(?:total(?:s|ing|ling|led)?|sum(?:s|med)?|combined|altogether|in all|overall"
            r"|subtotal|plus|times|multiplied)\b",
            re.IGNORECASE,
        ),
        frozenset({"+", "×"}),
    ),
    (
        re.compile(
            r"\b(?:difference|differ(?:s|ence)?|remain(?:s|ing)?|left|balance|refund(?:s|ed|ing)?"
            r"|sav(?:e|es|ed|ing|ings)|more|less|fewer|extra|additional|net|minus)\b",
            re.IGNORECASE,
        ),
        frozenset({"-"}),
    ),
    (
        re.compile(r"\b(?:per|each|apiece|average|mean|divided)\b", re.IGNORECASE),
        frozenset({"/"}),
    ),
)
# "$105 + $190 = $295": the turn writes the arithmetic out; it is checked, not searched.
_EQUATION = re.compile(
    r"(?P<a>[$€£¥]?\d[\d,.]*)\s*(?:\([^)\n]{0,40}\)\s*)?(?P<op>[-−+×x*/])\s*"
    r"(?P<b>[$€£¥]?\d[\d,.]*)\s*(?:\([^)\n]{0,40}\)\s*)?=\s*$"
)
_CUE_BEFORE = 80
_HEADER_LINES = 8
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")
_CUE_AFTER = 40
_AMOUNT_KEY = re.compile(
    r"price|amount|cost|total|fee|fare|balance|paid|refund|charge|payment|tax|salary|revenue"
    r"|budget|spend|compensation",
    re.IGNORECASE,
)
_COUNT_KEY = re.compile(r"count|number|num|qty|quantity|seats|baggage|bags|passengers|nights")
_CURRENCIES = frozenset(CURRENCY_CODES)
# A count multiplies or divides only where the turn says what it counts.
_COUNTED_NOUNS = (
    r"(?:passengers?|people|persons?|travell?ers?|adults?|children|guests?|bags?|"
    r"suitcases?|nights?|tickets?|seats?|items?|units?|rooms?|days?|months?|years?|hours?)"
)
# What follows a count ("3 passengers", "3 × $50") or comes just before it ("$50 × 3").
# Markdown bold ("2. **SFO to SEA**") is no multiplication sign.
_COUNTED = re.compile(rf"^\s*{_COUNTED_NOUNS}\b|^\s*(?:[x×]|\*(?!\*))", re.IGNORECASE)
_COUNTED_AFTER_SIGN = re.compile(r"(?<!\*)(?:[x×]|\*)\s*$", re.IGNORECASE)
# The count as a labelled field: "Number of passengers: 3", "Nights: 2".
_COUNT_LABEL = re.compile(rf"\b{_COUNTED_NOUNS}\s*:\s*\**\s*$", re.IGNORECASE)
_MAX_COUNT = 20
_OWN = "its own text"


@dataclass(frozen=True, slots=True)
class Cue:
    """Why a claim reads as an aggregate (the word) and which operations that allows."""

    word: str
    operations: frozenset[str]


def aggregate_cue(text: str, start: int, end: int) -> Cue | None:
    """What makes the value at ``text[start:end]`` read as an aggregate, if anything: in
    its line, shortly before it ("Total Price: $295") or after it ("$171 remaining"), or
    in the header of the list it is an item of ("Payment methods:" over "- Card: $171")."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[max(line_start, start - _CUE_BEFORE) : start]
    after = text[end : min(line_end, end + _CUE_AFTER)]
    header = _list_header(text, line_start) if _LIST_ITEM.match(text[line_start:start]) else ""
    words: list[str] = []
    operations: set[str] = set()
    for pattern, allowed in _CUES:
        found = pattern.search(before) or pattern.search(after) or pattern.search(header)
        if found:
            word = found.group(0).strip()
            words.append(word.lower())
            operations |= allowed
    return Cue(", ".join(words), frozenset(operations)) if words else None


def _list_header(text: str, line_start: int) -> str:
    """The line that introduces the list whose item starts at ``line_start``: the nearest
    line above, among the few before it, that is less indented or not an item — when it
    ends in ':' ("- **Payment Methods:**" over "  - Credit Card: $171")."""
    item = text[line_start : text.find("\n", line_start) if "\n" in text[line_start:] else None]
    indent = len(item) - len(item.lstrip())
    for line in reversed(text[:line_start].splitlines()[-_HEADER_LINES:]):
        depth = len(line) - len(line.lstrip())
        if _LIST_ITEM.match(line) and depth >= indent:
            continue
        return line if line.rstrip(" *").endswith(":") else ""
    return ""


def _column(key: str | None) -> tuple[str, str] | None:
    """A keyed value's column (its last two key names) and row (the list items above it)."""
    if not key:
        return None
    parts = key.split(".")
    names = [p for p in parts if not p.startswith("#")]
    last_index = max((i for i, p in enumerate(parts) if p.startswith("#")), default=-1)
    return ".".join(names[-2:]), ".".join(parts[:last_index])


def _group(quantity: Quantity, unit: str | None) -> str | None:
    """Which operands a claim in ``unit`` may combine — values of one kind: the same
    unit; for money also one amount-like column of one result row group (the legs of a
    connection); without a unit, one column of one result."""
    column = _column(quantity.key)
    if unit is not None:
        if quantity.unit == unit:
            return "unit"
        if column is None or unit not in _CURRENCIES or quantity.unit is not None:
            return None
        leaf = column[0].rsplit(".", 1)[-1]
        if _AMOUNT_KEY.search(column[0]) and not _COUNT_KEY.search(leaf):
            return f"{quantity.source}|{column[1]}|{column[0]}"
        return None
    if quantity.unit is None and column is not None:
        return f"{quantity.source}|{column[1]}|{column[0]}"
    return None


def derive(
    claim: StatedValue,
    text: str,
    own: Iterable[StatedValue],
    seen: SeenValues,
    settings: CompareSettings,
) -> str | None:
    """How the number ``claim`` (stated in ``text``) is produced by the records or the
    answer, quoted for the explanation (``$295 = $105 + $190 from its own text (total)``).

    Why so strict: with a handful of numbers in view, some sum or multiple of them equals
    almost any wrong value. Only structures count: a count is the length of one list a
    result returned (or the documents of one retrieval); a total the sum of one column
    of one list, or of the amounts the answer lists right before or after it; a remainder
    a difference of the answer's own amounts (or of a held amount less one it states); a
    product a count the answer states times a per-unit value — and the claim must read
    as the aggregate (a total sums, a balance subtracts, "per" divides).
    """
    if claim.kind != "number":
        return None
    number = float(claim.value)  # type: ignore[arg-type]
    tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
    own_values = [v for v in own if v.kind == "number" and v.start != claim.start]
    noun = counted_noun(claim, text)
    if noun is not None:
        how = _list_count(number, noun, seen) or _per_unit_product(number, text, own_values, seen)
        if how is not None:
            return f"{claim.raw} = {how} (count)"
    written = _equation(text, claim.start, number, tolerance, settings)
    if written is None:
        shown = written_result(text, claim.start, number, tolerance)
        written = None if shown is None else (shown.expression if shown.holds else "")
    if written is not None:
        return f"{claim.raw} = {written} (written out)" if written else None
    share = _split_share(claim, number, tolerance, text, own_values, seen, settings)
    if share is not None:
        return f"{claim.raw} = {share} (share of a split)"
    cue = aggregate_cue(text, claim.start, claim.end)
    if cue is None:
        return None
    how = _aggregate(claim, number, tolerance, text, own_values, seen, cue)
    return f"{claim.raw} = {how} ({cue.word})" if how else None


def _aggregate(
    claim: StatedValue,
    number: float,
    tolerance: float,
    text: str,
    own_values: list[StatedValue],
    seen: SeenValues,
    cue: Cue,
) -> str | None:
    """A total, remainder or product the cue allows, of operands of the claim's kind."""
    pools: dict[str, list[Quantity]] = {}
    for value in own_values:
        if value.unit == claim.unit:
            amount = float(value.value)  # type: ignore[arg-type]
            group = "own" if claim.unit is None else "unit"
            pools.setdefault(group, []).append(
                Quantity(amount, value.raw, value.unit, f"@{value.start}", _OWN)
            )
    for quantity in seen.quantities:
        kind = _group(quantity, claim.unit)
        if kind is not None:
            pools.setdefault(kind, []).append(quantity)
    remains = bool(_WHAT_REMAINS.search(cue.word))
    how = None
    if "+" in cue.operations:
        how = (
            _listed_total(number, tolerance, claim.start, pools)
            or _labelled_total(number, tolerance, text, pools)
            or _column_total(number, tolerance, text, pools)
        )
    if how is None and "-" in cue.operations:
        how = _difference(number, tolerance, pools)
    if how is None and claim.unit is not None and remains:
        how = _balance(number, tolerance, pools)
    if how is None and claim.unit is not None:
        how = _scaled(number, tolerance, _counts(text, own_values), pools, cue.operations)
    return how


_LIST_ITEM = re.compile(r"\s*(?:[-*•]|\d{1,2}[.)])\s")


def _split_share(
    claim: StatedValue,
    number: float,
    tolerance: float,
    text: str,
    own: list[StatedValue],
    seen: SeenValues,
    settings: CompareSettings,
) -> str | None:
    """The last share of a split the answer lists: "Gift Card: $128 / Credit Card: $171"
    of a $299 total is $299 - $128. The claim is an item of one list of the answer's,
    the items' amounts (in the claim's currency or unit) add up to a total the turn saw
    (:func:`_is_total`), and every other item's amount is seen as it is — so the claim
    is what remains."""
    if claim.unit is None:
        return None
    block = _list_block(text, claim.start)
    if block is None:
        return None
    start, end = block
    others = [
        v for v in own if v.unit == claim.unit and start <= v.start < end and v.kind == "number"
    ]
    if not others:
        return None
    if not all(seen.supports(v, settings) for v in others):
        return None
    total = number + sum(_amount(v) for v in others)
    stated = [_amount(v) for v in own if v.unit == claim.unit and _said_as_total(v, text)]
    if stated and not any(_near(t, total, tolerance) for t in stated):
        return None  # the answer's own total is the one the split must make
    for held in seen.quantities:
        if (
            held.unit in (claim.unit, None)
            and _is_total(held)
            and _near(held.value, total, tolerance)
        ):
            parts = " - ".join(v.raw for v in others)
            return f"{held.raw} - {parts}, the total from {held.source}"
    return None


_TOTAL_KEY = re.compile(r"total|sum|due|grand", re.IGNORECASE)
_TOTAL_WORDS = re.compile(r"\btotal\b|\bamount due\b|\bin all\b|\bитого\b|\bвсего\b", re.IGNORECASE)


def _is_total(held: Quantity) -> bool:
    """A quantity that is a total by how it was made: arithmetic the agent had computed
    (a calculator's expression) or a record's value under a total's key. Any other
    number in view would make some split add up by coincidence."""
    if held.source.startswith("arithmetic"):
        return True
    leaf = (held.key or "").rsplit(".", 1)[-1]
    return bool(_TOTAL_KEY.search(leaf))


def _said_as_total(value: StatedValue, text: str) -> bool:
    """The answer calls this amount a total ("The total cost … is $305")."""
    line = text[max(text.rfind("\n", 0, value.start) + 1, value.start - _LABEL_REACH) : value.start]
    return bool(_TOTAL_WORDS.search(line))


def _amount(value: StatedValue) -> float:
    return float(value.value)  # type: ignore[arg-type]


def _list_block(text: str, at: int) -> tuple[int, int] | None:
    """The span of the list whose item holds position ``at``: the run of consecutive
    list-item lines around it; None when that line is no list item."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    index = next((i for i in range(len(lines)) if offsets[i + 1] > at), None)
    if index is None:
        return None  # a position in another text than this one
    if not _LIST_ITEM.match(lines[index]):
        return None
    first = last = index
    while first > 0 and _LIST_ITEM.match(lines[first - 1]):
        first -= 1
    while last + 1 < len(lines) and _LIST_ITEM.match(lines[last + 1]):
        last += 1
    return offsets[first], offsets[last + 1]


def _position(quantity: Quantity) -> int:
    return int(quantity.key[1:]) if quantity.key and quantity.key.startswith("@") else -1


def _listed_total(
    number: float, tolerance: float, at: int, pools: dict[str, list[Quantity]]
) -> str | None:
    """The sum of two or more amounts the answer lists in the claim's unit right before
    it ("$177 … $146 … $180 … total $503") or right after it ("total $503: $177, …")."""
    for group in ("unit", "own"):
        listed = sorted((q for q in pools.get(group, []) if q.source == _OWN), key=_position)
        before = [q for q in listed if _position(q) < at]
        after = [q for q in listed if _position(q) > at]
        # Running sums, in the order the runs were always tried (longest run before the
        # claim first, then the shortest after it): a long text lists hundreds of
        # numbers, and summing each run afresh was cubic in them.
        suffix = [0.0] * (len(before) + 1)
        for i in range(len(before) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + before[i].value
        found = next(
            (i for i in range(len(before) - 1) if _near(suffix[i], number, tolerance)), None
        )
        if found is not None:
            return _summed(before[found:])
        prefix = 0.0
        for i, quantity in enumerate(after):
            prefix += quantity.value
            if i >= 1 and _near(prefix, number, tolerance):
                return _summed(after[: i + 1])
    return None


def _near(total: float, number: float, tolerance: float) -> bool:
    return abs(total - number) <= tolerance


def _summed(run: list[Quantity]) -> str:
    return " + ".join(q.raw for q in run) + _from(*run)


def _labelled_total(
    number: float, tolerance: float, text: str, pools: dict[str, list[Quantity]]
) -> str | None:
    """The sum of the amounts the answer lists under one label, a column of its own
    lists ("Basic Economy: $51" under each of two flights → "$106 in Basic Economy")."""
    columns: dict[str, list[Quantity]] = {}
    for group in ("unit", "own"):
        for q in pools.get(group, []):
            if q.source != _OWN:
                continue
            at = _position(q)
            # A label sits within a few dozen characters of its amount; searching the
            # whole line (a code block's can be thousands long) for each amount was
            # quadratic in long texts.
            line = text[max(text.rfind("\n", 0, at) + 1, at - _LABEL_REACH) : at]
            found = _LABEL_BEFORE.search(line)
            if found is not None:
                columns.setdefault(found.group("label").strip(" *_-").lower(), []).append(q)
    for name, column in columns.items():
        if len(column) >= 2 and abs(sum(q.value for q in column) - number) <= tolerance:
            return " + ".join(q.raw for q in column) + f" listed as '{name}' in its own text"
    return None


def _column_total(
    number: float, tolerance: float, text: str, pools: dict[str, list[Quantity]]
) -> str | None:
    """The sum of one column of one list a result returned — every row of it, or the
    rows the answer names by their ids ("your two flights HAT069 and HAT251")."""
    for group, pool in pools.items():
        if group in ("unit", "own") or len(pool) < 2:
            continue
        pool = sorted(pool, key=_row_order)
        named = _named_rows(pool, text)
        for operands in (named, pool) if named is not pool else (pool,):
            if len(operands) >= 2 and abs(sum(q.value for q in operands) - number) <= tolerance:
                return " + ".join(q.raw for q in operands) + _from(*operands)
    return None


def _row_order(quantity: Quantity) -> tuple[int, ...]:
    """Where a keyed value sits among its list's rows (``flights.#1.price`` → (1,))."""
    return tuple(int(i) for i in re.findall(r"#(\d+)", quantity.key or ""))


def _difference(number: float, tolerance: float, pools: dict[str, list[Quantity]]) -> str | None:
    """``a - b`` of two amounts in the claim's unit, one of them the answer's own (a
    refund, a difference, what remains of a held amount it names)."""
    if number <= 0:
        return None
    for group in ("unit", "own"):
        pool = pools.get(group, [])
        own = [q for q in pool if q.source == _OWN]
        others = [q for q in pool if q.source != _OWN]
        for a in own:
            for b in own + others:
                if b is a or a.value <= 0 or b.value <= 0:
                    continue
                if abs(a.value - b.value - number) <= tolerance:
                    return f"{a.raw} - {b.raw}{_from(a, b)}"
                if abs(b.value - a.value - number) <= tolerance:
                    return f"{b.raw} - {a.raw}{_from(b, a)}"
    return None


def _stem(noun: str) -> str:
    return noun.lower()[:4]


def _list_count(number: float, noun: str, seen: SeenValues) -> str | None:
    """A list a result returned with ``number`` items, of what the claim counts: the
    list's key names the noun ("3 flights" of ``flights``), it is a result's top-level
    list (its rows), or it is one retrieval's documents counted as documents."""
    for counted in seen.counts:
        if counted.value != number:
            continue
        key = counted.key
        leaf = key.rsplit(".", 1)[-1] if key else None
        if key == "documents":
            fits = noun.startswith(DOCUMENT_NOUNS)
        else:
            fits = leaf is None or _stem(leaf) == _stem(noun)
        if fits:
            where = f" '{key}'" if key and key != "documents" else ""
            return f"{counted.raw} in {counted.source}{where}"
    return None


_PER_UNIT = re.compile(
    r"(?<![\w.])(?P<n>\d+|[^\W\d_]+)\s+(?:[^\W\d_]+\s+){0,3}?(?:per|each|for each|a)\s+"
    r"(?P<unit>[^\W\d_]{3,})",
    re.IGNORECASE,
)


def _per_unit_product(
    number: float, text: str, own: list[StatedValue], seen: SeenValues
) -> str | None:
    """A count the answer states times a per-unit count said for the same thing
    ("2 passengers" and "2 free bags per passenger" → 4 bags)."""
    per_unit: list[tuple[float, str, str]] = []
    for found in _PER_UNIT.finditer(f"{seen.text}\n{text.lower()}"):
        raw = found.group("n")
        each = float(raw) if raw.isdigit() else NUMBER_WORDS.get(raw.lower())
        if each is not None:
            per_unit.append((float(each), found.group(0), _stem(found.group("unit"))))
    for value in own:
        noun = counted_noun(value, text)
        if noun is None:
            continue
        count = float(value.value)  # type: ignore[arg-type]
        for each, said, unit in per_unit:
            if unit == _stem(noun) and count * each == number:
                return f"{value.raw} {noun} × {each:g} ('{said}')"
    return None


# The cue words of what is left of an amount (not "additional", "difference", "refund").
_WHAT_REMAINS = re.compile(r"remain|left|balance", re.IGNORECASE)


def _balance(number: float, tolerance: float, pools: dict[str, list[Quantity]]) -> str | None:
    """``held - spent``: an amount of a result row (a certificate's ``amount: 500``) less
    an amount the turn states in the claim's currency ("the booking is $299 … $201
    remaining"). Only a claim that reads as what is left (a balance, "remaining",
    "left") gets here."""
    spent = [q for q in pools.get("unit", []) if q.source == _OWN and q.value > 0]
    for group, pool in pools.items():
        if group in ("unit", "own"):
            continue
        for held in pool:
            for amount in spent:
                if (
                    held.value > amount.value
                    and abs(held.value - amount.value - number) <= tolerance
                ):
                    return f"{held.raw} - {amount.raw}{_from(held, amount)}"
    return None


def _equation(
    text: str, start: int, number: float, tolerance: float, settings: CompareSettings
) -> str | None:
    """For a claim written as the result of arithmetic (``a op b = claim``): the
    arithmetic if it holds, "" if it does not; None when no arithmetic is written."""
    line_start = text.rfind("\n", 0, start) + 1
    found = _EQUATION.search(text[max(line_start, start - 80) : start])
    if found is None:
        return None
    a, b = (parse_number(found[k], settings.ambiguous_comma) for k in ("a", "b"))
    if a is None or b is None:
        return None
    op = {"−": "-", "x": "×", "*": "×"}.get(found["op"], found["op"])
    results = {
        "+": a.value + b.value,
        "-": a.value - b.value,
        "×": a.value * b.value,
        "/": a.value / b.value if b.value else float("nan"),
    }
    holds = abs(results[op] - number) <= tolerance
    return f"{found['a']} {op} {found['b']} from its own text" if holds else ""


def _counts(text: str, own: list[StatedValue]) -> set[int]:
    """Counts the turn states with what they count ("3 passengers", "× 2",
    "Number of passengers: 3")."""
    counts = set()
    for value in own:
        number = float(value.value)  # type: ignore[arg-type]
        counted = (
            _COUNTED.search(text[value.end : value.end + 16])
            or _COUNTED_AFTER_SIGN.search(text[max(0, value.start - 3) : value.start])
            or _COUNT_LABEL.search(text[max(0, value.start - 32) : value.start])
        )
        if number.is_integer() and 2 <= number <= _MAX_COUNT and counted:
            counts.add(int(number))
    return counts


def _scaled(
    number: float,
    tolerance: float,
    counts: set[int],
    pools: dict[str, list[Quantity]],
    operations: frozenset[str],
) -> str | None:
    """``k × a`` (a total) or ``a / k`` (a per-unit amount) for a count ``k`` the turn states."""
    for pool in pools.values():
        for a in pool:
            for k in sorted(counts):
                if "×" in operations and abs(a.value * k - number) <= tolerance:
                    return f"{k} × {a.raw}{_from(a)}"
                if "/" in operations and abs(a.value / k - number) <= tolerance:
                    return f"{a.raw} / {k}{_from(a)}"
    return None


def _from(*operands: Quantity) -> str:
    sources = list(dict.fromkeys(q.source for q in operands))
    columns = list(dict.fromkeys(c[0] for q in operands if (c := _column(q.key))))
    column = f" '{columns[0]}'" if len(columns) == 1 else ""
    return f" from {' and '.join(sources)}{column}"


# --- the one verdict ---------------------------------------------------------------------
SupportStatus = Literal["supported", "contradicted", "unsupported", "not checkable"]


@dataclass(frozen=True, slots=True)
class ValueSupport:
    """What the context says of one stated value.

    ``how`` (when supported): ``verbatim`` (said as such), ``tolerance`` (equal after
    normalisation, within the tolerances) or ``derived`` (``quote`` holds the
    derivation); ``quote`` of a contradiction is the record's other value for the same
    key; ``closest`` of an unsupported value is the nearest candidate of its kind.
    """

    value: StatedValue
    status: SupportStatus
    how: Literal["verbatim", "tolerance", "derived"] | None = None
    quote: str = ""
    closest: str | None = None

    @property
    def fails(self) -> bool:
        """A value a reviewer can check is wrong: contradicted or unsupported."""
        return self.status in ("contradicted", "unsupported")


# "Total price: $503", "**Balance** — 171": the label a value is stated under.
_LABEL_REACH = 200
_LABEL_BEFORE = re.compile(r"(?P<label>[^\W\d_][\w ]{1,30}?)[\s*_]*(?::|=|—|\bis\b)[\s*_$€£¥]*$")


def support_value(
    value: StatedValue,
    seen: SeenValues,
    settings: CompareSettings,
    *,
    text: str = "",
    own: Iterable[StatedValue] = (),
    date_slack_days: int = 0,
) -> ValueSupport:
    """The one value-support rule of truthfulness and groundedness: whether ``value``
    (stated in ``text``, whose values are ``own``) is worth checking
    (:func:`is_distinctive`), said in what the turn saw (:meth:`SeenValues.supports`:
    a date with a year matches its year, a long digit run matches digit for digit,
    values match at token boundaries), produced by the records (:func:`derive`), given
    otherwise by a record under the same key (contradicted), or none of these."""
    if not is_distinctive(value, text):
        return ValueSupport(value, "not checkable", quote="not distinctive")
    noun = counted_noun(value, text)
    if noun is not None and _counts_checkable(value) and not _enumerated(noun, seen, text):
        return ValueSupport(value, "not checkable", quote=f"nothing the turn saw lists {noun}")
    if seen.supports(value, settings, date_slack_days=date_slack_days):
        text_seen = seen.text_at_hand()
        verbatim = text_seen is not None and said_at_boundary(value.raw.lower(), text_seen)
        return ValueSupport(value, "supported", "verbatim" if verbatim else "tolerance")
    how = derive(value, text, own, seen, settings)
    if how is not None:
        return ValueSupport(value, "supported", "derived", quote=how)
    other = _same_key_value(value, text, seen)
    if other is not None:
        return ValueSupport(value, "contradicted", quote=other, closest=other)
    return ValueSupport(value, "unsupported", closest=seen.closest(value))


def _counts_checkable(value: StatedValue) -> bool:
    """Checkable as a count only: a small bare integer (no unit, under 100)."""
    return value.unit is None and float(value.value) < 100  # type: ignore[arg-type]


def _enumerated(noun: str, seen: SeenValues, text: str) -> bool:
    """Whether what the turn saw enumerates ``noun``, so a count of it is a checkable
    fact: a list under a key naming it, a result that is itself a list (its rows),
    retrieved documents counted as documents, or an
    amount of it per unit ("2 free bags per passenger"). "Compare the two menus" in a
    plan counts nothing the context lists: no proof either way."""
    for counted in seen.counts:
        if counted.key == "documents":
            if noun.startswith(DOCUMENT_NOUNS):
                return True
        elif counted.key is None or _stem(counted.key.rsplit(".", 1)[-1]) == _stem(noun):
            return True  # a result that is a list: its rows are what the answer counts
    per_unit = re.compile(rf"\b{re.escape(_stem(noun))}\w*\s+(?:per|each|for each)\b")
    return bool(per_unit.search(seen.text) or per_unit.search(text.lower()))


def _same_key_value(value: StatedValue, text: str, seen: SeenValues) -> str | None:
    """The value a record gives under the key the claim states ``value`` under ("Total
    price: $503" against ``"total_price": 480``) — only when the record has that key
    once, so it is the same thing, not another row's."""
    if value.kind != "number" or not text:
        return None
    line_start = text.rfind("\n", 0, value.start) + 1
    found = _LABEL_BEFORE.search(text[line_start : value.start])
    if found is None:
        return None
    label = re.sub(r"\W+", "_", found.group("label").strip().lower())
    same = [q for q in seen.quantities if q.key and q.key.rsplit(".", 1)[-1].lower() == label]
    if len(same) != 1:
        return None
    return f"{same[0].key} = {same[0].raw} in {same[0].source}"


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
            yield from (self.numbers[n] for n in {float(value.value)} if n in self.numbers)  # type: ignore[arg-type]
        elif value.kind == "number":
            yield from self._near(float(value.value), settings)  # type: ignore[arg-type]
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
