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
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timedelta
from typing import Any

from aem.compare.clock import keys_of_instant
from aem.compare.extract import StatedValue, extract_values
from aem.compare.numbers import parse_number
from aem.compare.settings import CompareSettings
from aem.vocabulary import CURRENCY_CODES, MONTHS_EN

_DIGITS = re.compile(r"\d+")
# "24-hour", "3-day", "2-year-old": a count with a unit word (an age), not an identifier.
_COUNT_WORD = re.compile(
    r"^\d+[-\s]?(?:hours?|days?|weeks?|months?|years?|minutes?|seconds?|nights?|hrs?|mins?)"
    r"(?:[-\s]old)?$",
    re.IGNORECASE,
)
# A digit run this long said inside an id or a word supports the same number.
_VERBATIM_DIGITS = 4


def _day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def day_range(value: StatedValue) -> tuple[date, date]:
    """First and last day a date or period value covers."""
    assert isinstance(value.value, tuple)
    start, end = value.value
    return _day(start), _day(end)


def is_distinctive(value: StatedValue) -> bool:
    """Worth checking: small bare integers (counts, list numbering, clock hours) are not."""
    if value.kind == "id":
        return not _COUNT_WORD.match(value.raw.strip())
    if value.kind in ("date", "period", "time", "day"):
        return True
    number = float(value.value)  # type: ignore[arg-type]
    return value.unit is not None or abs(number) >= 100 or not number.is_integer()


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
class SeenValues:
    """Normalised values from everything a turn could see."""

    numbers: list[float] = field(default_factory=list)
    dates: list[tuple[date, date, str]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    quantities: list[Quantity] = field(default_factory=list)
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
        for item in texts:
            source, text = item if isinstance(item, tuple) else ("input", item)
            if not text:
                continue
            if keyed:
                chunks.append(text.lower())
            evidence._add(text, source, settings, keyed)
        evidence.numbers.sort()
        evidence.text = "\n".join(chunks)
        return evidence

    def _add(self, text: str, source: str, settings: CompareSettings, keyed: bool) -> None:
        for value in extract_values(text, settings):
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
            return self._supports_number(float(value.value), value.raw, settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            slack = timedelta(days=date_slack_days)
            if any(es - slack <= e and s <= ee + slack for es, ee, _ in self.dates):
                return True
            # "May 20th" in a user message states the day without a year.
            month = MONTHS_EN[s.month - 1]
            return s == e and any(f"{name} {s.day}" in self.text for name in (month, month[:3]))
        if str(value.value) in self.ids or value.raw.lower() in self.text:
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

    def states(self, value: StatedValue, settings: CompareSettings) -> bool:
        """The value itself was said (no derivation, no slack): for coverage checks."""
        if value.kind == "number":
            return near_any(self.numbers, float(value.value), settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            return any(es <= s and e <= ee for es, ee, _ in self.dates)
        return str(value.value) in self.ids or value.raw.lower() in self.text

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


_ARITHMETIC = re.compile(r"^[\d\s.+\-*/()]+$")
# What every string arithmetic_results reads contains: a JSON string of _ARITHMETIC's
# characters with an operator in it (one search, not a match per string of the text).
_MAY_HOLD_ARITHMETIC = re.compile(r'"[\d\s.()]*[+\-*/][\d\s.+\-*/()]*"')
_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


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
            value = _evaluate(node) if isinstance(node, ast.BinOp) else None
            if value is not None:
                found.append(Quantity(value, f"{value:g}", None, None, f"arithmetic '{string}'"))
    return found


def _evaluate(node: ast.AST) -> float | None:
    """The value of a numeric expression of + - * /, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _evaluate(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _OPERATORS[type(node.op)](left, right)
    return None


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
    """How the number ``claim`` (stated in ``text``) is an aggregate of values of its
    kind, quoted for the explanation (``$295 = $105 + $190 from its own text (total)``).

    Why so strict: with a handful of numbers in view, some sum or multiple of them equals
    almost any wrong value. Operands are values of one kind — the claim's unit (the
    turn's own text and what it saw), or one amount-like column of one result; the claim
    must read as the aggregate (a total sums, a balance subtracts, "per" divides); a
    count scales only where the turn states what it counts.
    """
    if claim.kind != "number":
        return None
    number = float(claim.value)  # type: ignore[arg-type]
    tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
    written = _equation(text, claim.start, number, tolerance, settings)
    if written is not None:
        return f"{claim.raw} = {written} (written out)" if written else None
    cue = aggregate_cue(text, claim.start, claim.end)
    if cue is None:
        return None
    own_values = [v for v in own if v.kind == "number" and v.start != claim.start]
    pools: dict[str, list[Quantity]] = {}
    for value in own_values:
        if value.unit == claim.unit:
            amount = float(value.value)  # type: ignore[arg-type]
            group = "own" if claim.unit is None else "unit"
            pools.setdefault(group, []).append(Quantity(amount, value.raw, value.unit, None, _OWN))
    for quantity in seen.quantities:
        kind = _group(quantity, claim.unit)
        if kind is not None:
            pools.setdefault(kind, []).append(quantity)
    pools = {group: _named_rows(pool, text) for group, pool in pools.items()}
    how = _pair(number, tolerance, pools, cue.operations)
    if how is None and claim.unit is not None and _WHAT_REMAINS.search(cue.word):
        how = _balance(number, tolerance, pools)
    if how is None and claim.unit is not None:
        how = _scaled(number, tolerance, _counts(text, own_values), pools, cue.operations)
    return f"{claim.raw} = {how} ({cue.word})" if how else None


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


def _pair(
    number: float, tolerance: float, pools: dict[str, list[Quantity]], operations: frozenset[str]
) -> str | None:
    """``a + b`` or ``a - b`` of two different values within one pool. Amounts in the
    claim's unit combine only with one of the turn's own (a balance it computes from what
    it says); a result column only sums (its rows make up a total)."""
    for group, pool in pools.items():
        own = [q for q in pool if q.source == _OWN]
        others = list({q.value: q for q in pool if q.source != _OWN}.values())
        ordered = sorted(own + others, key=lambda q: q.value)
        values = [q.value for q in ordered]
        column = group not in ("unit", "own")

        def near(target: float, values: list[float] = values) -> int | None:
            i = bisect.bisect_left(values, target - tolerance)
            return i if i < len(values) and values[i] <= target + tolerance else None

        for i, a in enumerate(ordered):
            if not column and a.source != _OWN:
                continue  # the first operand of a unit pair is the turn's own
            j = near(number - a.value) if "+" in operations else None
            if j is not None and j != i and a.value > 0 and ordered[j].value > 0:
                return f"{a.raw} + {ordered[j].raw}{_from(a, ordered[j])}"
            j = near(a.value - number) if "-" in operations and not column else None
            if j is not None and j != i and ordered[j].value > 0 and number > 0:
                return f"{a.raw} - {ordered[j].raw}{_from(a, ordered[j])}"
            j = near(a.value + number) if "-" in operations and not column else None
            if j is not None and j != i and number > 0:
                return f"{ordered[j].raw} - {a.raw}{_from(ordered[j], a)}"
    return None


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
        if value.kind == "number":
            yield from self._near(float(value.value), settings)  # type: ignore[arg-type]
        elif value.kind in ("date", "period"):
            start, end = day_range(value)
            for shift in range(-slack, slack + 1):
                moved = (start + timedelta(days=shift), end + timedelta(days=shift))
                if moved in self.dates:
                    yield self.dates[moved]
        else:
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
