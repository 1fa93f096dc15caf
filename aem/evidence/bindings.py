"""What a stated value is bound to, and the contradiction when its source says otherwise.

Why binding and not "the closest number": a value the trace does not hold is usually one
the agent worked out, so its absence proves nothing. It is proven wrong only when a
source binds *another* value to the *same thing*, and "the same thing" is decided by
structure, never by likeness:

* **written arithmetic** — ``2+3=11``: the text writes out the operation, the operation
  gives another result (the one rule ``written_arithmetic`` of the derivations, which
  derives a result or refutes it; its switch holds here too);
* **the field the claim labels** — "Total price: $503" against the one ``total_price``
  a record holds;
* **the call a sentence restates** — every argument of a call that ran is said in the
  sentence ("2+3" after ``add(a=2, b=3)``; "the refund for ORD-1" after
  ``get_refund(order_id="ORD-1")``) and the call returned one number: the one other
  number of the sentence is that result;
* **the field of the record a sentence names** — the one result row the sentence names
  by one of its ids, by another value of it, or by the field's own name ("your refund
  is $40" against ``refund``), with exactly one field of the value's kind (a time, a
  date, an amount, a measure of that unit); a row the sentence does not name binds
  nothing, however alone it is in view;
* **the list a count's noun names** — "3 flights" against the one list under a key
  ``flights``; "3 options" names no list, so it binds nothing;
* **the one measurement of a unit** in what the calls returned ("37C" against a forecast
  of 14C, when no other temperature is in view);
* **a near miss** of an id a source states — one changed character or two swapped
  neighbours ("E-5512" where the user asked about E-5521); a similar shape alone binds
  nothing.

Each rule runs only on values no source supports, so a value the user or a tool states
is never "contradicted" by another field. What binds nothing stays a suspect. The rules
are one table, :data:`BINDINGS` (:class:`aem.evidence.rules.RuleTable`): each row named,
with the sets it was found on, switchable for the ablation bench.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aem.compare.clock import day_key, time_key
from aem.compare.extract import StatedValue, extract_values
from aem.compare.settings import CompareSettings
from aem.evidence.arithmetic import shown_number
from aem.evidence.claims import sentence_breaks
from aem.evidence.derivations import DERIVATIONS, Refuted, ValueClaim, written_arithmetic
from aem.evidence.names import PersonName, folded_words, person_name, person_names
from aem.evidence.rules import Rule, RuleTable
from aem.evidence.stems import stem
from aem.evidence.values import LABEL_BEFORE, SeenValues, counted_noun, said_at_boundary
from aem.foundation.model import Turn

_AMOUNT_KEY = re.compile(
    r"price|amount|cost|total|fee|fare|balance|paid|refund|charge|payment|salary", re.IGNORECASE
)
_ID_LIKE = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[\w-]{3,32}$")
_MAX_NODES = 5000


@dataclass(frozen=True, slots=True)
class Call:
    """A call that ran, as bindings read it: where it ran (``t2 get_refund``), its
    arguments and its result, parsed from JSON where they were JSON."""

    source: str
    arguments: Any
    result: Any

    @classmethod
    def of(cls, turn: Turn) -> Call | None:
        """The call ``turn`` made, when it returned something and did not fail."""
        call = turn.tool_call
        if call is None or not call.has_result or call.error:
            return None
        result = call.result if call.result is not None else parsed(call.result_raw)
        arguments = call.arguments if call.arguments else parsed(call.arguments_raw)
        return cls(f"{turn.turn_id} {call.name}", parsed(arguments), result)


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A stated value, the value a source binds to the same thing, and how it is bound."""

    stated: str
    bound: str
    where: str
    binding: str

    @property
    def quote(self) -> str:
        """One line a reviewer checks: "t1 add result gives 5 (call result)"."""
        return f"{self.where} gives {self.bound} ({self.binding})"


def parsed(raw: Any) -> Any:
    """A tool result or arguments as data: JSON text is parsed, anything else kept."""
    if isinstance(raw, str) and raw.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


@dataclass(frozen=True, slots=True)
class Stated:
    """One stated value and all a binding may read: the ``text`` it is stated in, its
    sentence (and where that starts), the calls that ran, the ids sources state, and —
    where the caller has them — the values the turn saw."""

    value: StatedValue
    text: str
    sentence: str
    offset: int
    calls: Sequence[Call]
    settings: CompareSettings
    ids: Mapping[str, str]
    seen: SeenValues | None = None

    @classmethod
    def of(
        cls,
        value: StatedValue,
        text: str,
        calls: Sequence[Call],
        settings: CompareSettings,
        ids: Mapping[str, str] | None = None,
        seen: SeenValues | None = None,
    ) -> Stated:
        sentence, offset = _sentence(text, value)
        return cls(value, text, sentence, offset, calls, settings, ids or {}, seen)


def contradiction(
    value: StatedValue,
    text: str,
    calls: Sequence[Call],
    settings: CompareSettings,
    source_ids: Mapping[str, str] | None = None,
    seen: SeenValues | None = None,
) -> Contradiction | None:
    """Written arithmetic its result does not give, else the first binding of
    :data:`BINDINGS` (not switched off) that proves ``value`` (stated in ``text``) wrong,
    else None.

    >>> from aem.compare.extract import extract_values
    >>> s = CompareSettings()
    >>> text = "2+3=11"
    >>> eleven = extract_values(text, s)[-1]
    >>> contradiction(eleven, text, [Call("t1 add", {"a": 2, "b": 3}, 5)], s).quote
    'the arithmetic it writes (2 + 3) gives 5 (written arithmetic)'
    """
    stated = Stated.of(value, text, calls, settings, source_ids, seen)
    found = BINDINGS.first(stated)
    return _written(stated) or (found[1] if found is not None else None)


def worked_out_wrong(
    values: Sequence[StatedValue],
    text: str,
    calls: Sequence[Call],
    settings: CompareSettings,
) -> list[Contradiction]:
    """Numbers of ``text`` — every one, distinctive or not — that the arithmetic written
    before them, or the call whose arguments their sentence restates, does not give."""
    if "=" not in text and not calls:
        return []
    found = []
    for value in values:
        if value.kind != "number" or text[value.start : value.end] != value.raw:
            continue
        stated = Stated.of(value, text, calls, settings)
        wrong = _written(stated) or _call_result(stated)
        if wrong is not None:
            found.append(wrong)
    return found


def _sentence(text: str, value: StatedValue) -> tuple[str, int]:
    """The sentence (or line) of ``text`` holding ``value``, and where it starts: cut
    where claims are cut (:func:`aem.evidence.claims.sentence_breaks`)."""
    if not text or text[value.start : value.end] != value.raw:
        return value.raw, value.start
    start, end = 0, len(text)
    for stop, following in sentence_breaks(text):
        if following <= value.start:
            start = following
        elif stop >= value.end:
            end = stop
            break
    return text[start:end], start


def _written(stated: Stated) -> Contradiction | None:
    """A result written after ``=`` that its own arithmetic does not give: the
    refutation of the one written-arithmetic rule
    (:func:`aem.evidence.derivations.written_arithmetic`)."""
    value, text = stated.value, stated.text
    if not DERIVATIONS.is_active("written_arithmetic"):
        return None
    if value.kind != "number" or not text or text[value.start : value.end] != value.raw:
        return None
    claim = ValueClaim.of(value, text, (), SeenValues(), stated.settings)
    how = written_arithmetic(claim)
    return refutation(value.raw, how) if isinstance(how, Refuted) else None


def refutation(stated: str, how: Refuted) -> Contradiction:
    """A result its own written arithmetic does not give, as a contradiction."""
    where = f"the arithmetic it writes ({how.written})"
    return Contradiction(stated, how.gives, where, "written arithmetic")


def _leaves(item: Any, key: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every scalar of a parsed JSON value with the key it sat under."""
    if depth > 12:
        return
    if isinstance(item, dict):
        for k, v in item.items():
            yield from _leaves(v, str(k), depth + 1)
    elif isinstance(item, list):
        for v in item[:_MAX_NODES]:
            yield from _leaves(v, key, depth + 1)
    elif item is not None and not isinstance(item, bool):
        yield key, item


def _call_result(given: Stated) -> Contradiction | None:
    """The one other number of a sentence that restates a call's every argument, against
    the one number that call returned."""
    value, sentence, offset = given.value, given.sentence, given.offset
    calls, settings = given.calls, given.settings
    if value.kind != "number":
        return None
    numbers = [v for v in extract_values(sentence, settings) if v.kind == "number"]
    for call in calls:
        arguments = list(_leaves(call.arguments))
        result = _single_number(call.result, settings)
        if not arguments or result is None or not _restates(sentence, arguments, numbers):
            continue
        said = {float(a) for _, a in arguments if _is_number(a)}
        others = [v for v in numbers if float(v.value) not in said]  # type: ignore[arg-type]
        if len(others) != 1 or others[0].start + offset != value.start:
            continue
        stated = value.number
        if not math.isclose(stated, result, rel_tol=settings.number_rel_tol, abs_tol=1e-9):
            return Contradiction(
                value.raw, shown_number(result), f"{call.source} result", "call result"
            )
    return None


def _is_number(item: Any) -> bool:
    return isinstance(item, int | float) and not isinstance(item, bool)


def _single_number(result: Any, settings: CompareSettings) -> float | None:
    """The number a call returned when it returned exactly one."""
    found: list[float] = []
    for _, leaf in _leaves(parsed(result)):
        if _is_number(leaf):
            found.append(float(leaf))
        elif isinstance(leaf, str):
            found.extend(
                float(v.value)  # type: ignore[arg-type]
                for v in extract_values(leaf, settings)
                if v.kind == "number"
            )
        if len(found) > 1:
            return None
    return found[0] if found else None


def _restates(sentence: str, arguments: list[tuple[str, Any]], numbers: list[StatedValue]) -> bool:
    """Every argument of the call is said in the sentence: numbers as numbers, strings
    as whole tokens."""
    said = {float(v.value) for v in numbers}  # type: ignore[arg-type]
    lowered = sentence.lower()
    for _, argument in arguments:
        if _is_number(argument):
            if float(argument) not in said:
                return False
        elif not (str(argument).strip() and said_at_boundary(str(argument).lower(), lowered)):
            return False
    return True


def _kind_of(value: StatedValue) -> str | None:
    """The kind a record field must have to bind ``value``: a time, a day, a date, an
    amount of a currency, a measure of a unit; plain numbers and ids bind no field."""
    if value.kind in ("time", "day", "date"):
        return value.kind
    if value.kind == "number" and value.unit is not None:
        return f"number:{value.unit}"
    return None


def _field_kinds(key: str, leaf: Any, settings: CompareSettings) -> list[tuple[str, Any, str]]:
    """A record field's values of bindable kinds: ``(kind, value, as written)``; a bare
    number under an amount's key (``"price": 105``) is an amount in any currency."""
    if isinstance(leaf, str) and len(leaf) <= 64:
        found: list[tuple[str, Any, str]] = []
        for v in extract_values(leaf, settings):
            kind = _kind_of(v)
            if kind == "date" and isinstance(v.value, tuple) and v.value[0] == v.value[1]:
                moment = v.value[0]
                day = moment.date() if isinstance(moment, datetime) else moment
                found.append(("day", day_key(day.month, day.day), v.raw))  # May 27 ~ 2024-05-27
                if isinstance(moment, datetime):  # an ISO start holds a date *and* a time
                    found.append(("date", (day, day), v.raw))
                    found.append(("time", time_key(moment.hour, moment.minute), v.raw))
                    continue
            if kind is not None:
                found.append((kind, v.value, v.raw))
        return found
    if _is_number(leaf) and _AMOUNT_KEY.search(key):
        return [("amount", float(leaf), str(leaf))]
    return []


def _matches(kind: str, field_kind: str) -> bool:
    """A stated kind and a field's: the same, or an amount of a currency and a bare
    amount field."""
    currency = kind.removeprefix("number:")
    return field_kind == kind or (
        field_kind == "amount" and kind != currency and currency.isupper()
    )


def _records(calls: Sequence[Call]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every row (a dict of scalars, perhaps among nested values) of every result."""
    for call in calls:
        stack: list[Any] = [parsed(call.result)]
        seen = 0
        while stack and seen < _MAX_NODES:
            item = stack.pop()
            seen += 1
            if isinstance(item, dict):
                if any(not isinstance(v, dict | list) for v in item.values()):
                    yield f"{call.source} result", item
                stack.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                stack.extend(item[:_MAX_NODES])


def _record_field(stated: Stated) -> Contradiction | None:
    """The one field of the value's kind in the one record the sentence names: by an id
    the record holds, by another value the sentence states that a field of it holds
    ("May 6"), or by the field's own name ("your refund is $40" against ``refund``).
    When the sentence names no record, an amount of money binds the one amount field of
    the one record the whole answer names ("Your booking BK-1 is on May 6. The fee is
    €40." — the fee is that booking's). A record nothing names binds nothing, however
    alone it is in view."""
    value, sentence, text = stated.value, stated.sentence, stated.text
    calls, settings = stated.calls, stated.settings
    kind = _kind_of(value)
    if kind is None or (kind.startswith("number") and _other_numbers(value, sentence, settings)):
        return None  # "3 nights at HAT105 cost $315": an amount worked out, not a field
    rows = [
        (where, row, fields)
        for where, row in _records(calls)
        if len(fields := _fields_of_kind(row, kind, settings)) == 1
    ]
    said = _Said(sentence, value, settings)
    chosen = [(w, f[0]) for w, row, f in rows if said.names(row, f[0][0], settings)]
    # Only an amount of money is read across sentences: a record holds one price, but
    # many dates and times (created, updated, departs), and a date in a sentence that
    # names no record may be about anything ("searching a day later, on May 24").
    if not chosen and text and text != sentence and kind.startswith("number:"):
        whole = _Said(text, value, settings)
        named = [(w, f[0]) for w, row, f in rows if whole.names_by_id(row)]
        chosen = named if len(named) == 1 and not said.names_any(rows) else []
    if len(chosen) != 1:
        return None
    where, (key, (_, bound, raw)) = chosen[0]
    if bound == value.value or (
        isinstance(bound, float)
        and math.isclose(bound, value.number, rel_tol=settings.number_rel_tol)
    ):
        return None
    return Contradiction(value.raw, raw, f"{key} in {where}", "record field")


def _fields_of_kind(
    row: dict[str, Any], kind: str, settings: CompareSettings
) -> list[tuple[str, tuple[str, Any, str]]]:
    return [
        (key, found)
        for key, leaf in row.items()
        if not isinstance(leaf, dict | list)
        for found in _field_kinds(key, leaf, settings)
        if _matches(kind, found[0])
    ]


class _Said:
    """What a sentence says besides the value checked: its words and its other values."""

    def __init__(self, sentence: str, value: StatedValue, settings: CompareSettings) -> None:
        self.lowered = sentence.lower()
        self.stems = {stem(w) for w in re.findall(r"[^\W\d_]{3,}", self.lowered)}
        self.values = {
            (v.kind, str(v.value)) for v in extract_values(sentence, settings) if v.raw != value.raw
        }

    def names(self, row: dict[str, Any], key: str, settings: CompareSettings) -> bool:
        """Whether the sentence names ``row``: an id of it, a value of it, or ``key``."""
        for leaf in row.values():
            if not isinstance(leaf, str) or len(leaf) > 64:
                continue
            if _ID_LIKE.match(leaf) and said_at_boundary(leaf.lower(), self.lowered):
                return True
            if any((v.kind, str(v.value)) in self.values for v in extract_values(leaf, settings)):
                return True
        words = [w for w in re.split(r"[_\W]+", key.lower()) if len(w) >= 3]
        return bool(words) and all(stem(w) in self.stems for w in words)

    def names_by_id(self, row: dict[str, Any]) -> bool:
        """Whether the text names ``row`` by one of its ids."""
        return _names_by_id(row, self.lowered)

    def names_any(self, rows: Sequence[tuple[str, dict[str, Any], Any]]) -> bool:
        """Whether the sentence names any of ``rows`` by an id (then it is about that one)."""
        return any(self.names_by_id(row) for _, row, _ in rows)


def _other_numbers(value: StatedValue, sentence: str, settings: CompareSettings) -> bool:
    """Whether the sentence states a number besides ``value`` (one it may be worked
    out from)."""
    return any(
        v.kind == "number" and v.raw != value.raw for v in extract_values(sentence, settings)
    )


def _list_count(stated: Stated) -> Contradiction | None:
    """A count against the one list in view under a key its noun names."""
    value, text, calls = stated.value, stated.text, stated.calls
    noun = counted_noun(value, text)
    if noun is None or value.unit is not None:
        return None
    lists = [
        (call.source, key, len(item))
        for call in calls
        for key, item in _lists(parsed(call.result))
        if stem(key.lower().rsplit("_", 1)[-1]) == stem(noun)
    ]
    if len(lists) != 1:
        return None
    source, key, length = lists[0]
    if length == value.number:
        return None
    return Contradiction(value.raw, str(length), f"the list {key} in {source} result", "list count")


def _lists(item: Any, depth: int = 0) -> Iterator[tuple[str, list[Any]]]:
    """Every list held under a key, with its key."""
    if depth > 12 or not isinstance(item, dict):
        return
    for key, value in item.items():
        if isinstance(value, list):
            yield str(key), value
        elif isinstance(value, dict):
            yield from _lists(value, depth + 1)


_MEASURE = re.compile(r"^(?P<number>\d+(?:[.,]\d+)?)\s?°?(?P<unit>[^\W\d_]{1,3})$")


def _measure(value: StatedValue) -> tuple[float, str] | None:
    """A measurement a value states: a number with a unit that is not a currency, or an
    id shaped like one ("14C", read as an id: digits, then a short unit)."""
    if value.kind == "number" and value.unit and not value.unit.isupper():
        return value.number, value.unit.lower()
    found = _MEASURE.match(value.raw) if value.kind == "id" else None
    if found is None:
        return None
    return float(found["number"].replace(",", ".")), found["unit"].lower()


def _one_measure(given: Stated) -> Contradiction | None:
    """A measurement against the one measurement of that unit the results hold ("37C"
    against a forecast of 14C)."""
    value, calls = given.value, given.calls
    stated = _measure(value)
    if stated is None:
        return None
    number, unit = stated
    pattern = re.compile(
        rf"(?<![\w.,])(\d+(?:[.,]\d+)?)\s?°?{re.escape(unit)}(?![^\W\d_])", re.IGNORECASE
    )
    held = {
        (float(m.group(1).replace(",", ".")), m.group(0), call.source)
        for call in calls
        for _, leaf in _leaves(parsed(call.result))
        if isinstance(leaf, str)
        for m in pattern.finditer(leaf)
    }
    if len({h[0] for h in held}) != 1:
        return None
    bound, raw, source = next(iter(held))
    if math.isclose(bound, number):
        return None
    return Contradiction(value.raw, raw, f"{source} result", "the one measurement of its unit")


def near_miss(a: str, b: str) -> bool:
    """One changed character or two swapped neighbours, same length, not equal.

    >>> near_miss("e-5512", "e-5521"), near_miss("x-417", "e-5521"), near_miss("a1", "a1")
    (True, False, False)
    """
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(diff) == 1:
        return True
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and (a[diff[1]] == b[diff[0]])
    )


# Digits an id must hold for one changed or swapped digit to be a slip, not another
# thing: "Freon-13" beside "Freon-12", "GPT-4" beside "GPT-3" are other things.
_SLIP_DIGITS = 4


def _near_miss(given: Stated) -> Contradiction | None:
    """An id of four digits or more one slip away from exactly one id a source states
    (``ids``: each canonical id with the raw text a source wrote)."""
    value, source_ids = given.value, given.ids
    if value.kind != "id":
        return None
    stated = str(value.value)
    close = [i for i in source_ids if near_miss(stated, i)]
    if len(close) != 1 or sum(c.isdigit() for c in stated) < _SLIP_DIGITS:
        return None
    return Contradiction(value.raw, source_ids[close[0]], "the id a source states", "near miss")


def _labelled_field(stated: Stated) -> Contradiction | None:
    """The value a record gives under the label the claim states the value under ("Total
    price: $503" against ``"total_price": 480``) — only when the records hold that key
    once, so it is the same thing, not another row's."""
    value, text, seen = stated.value, stated.text, stated.seen
    if value.kind != "number" or not text or seen is None:
        return None
    line_start = text.rfind("\n", 0, value.start) + 1
    found = LABEL_BEFORE.search(text[line_start : value.start])
    if found is None:
        return None
    label = re.sub(r"\W+", "_", found.group("label").strip().lower())
    same = [q for q in seen.quantities if q.key and q.key.rsplit(".", 1)[-1].lower() == label]
    if len(same) != 1:
        return None
    where = f"{same[0].key} in {same[0].source}"
    return Contradiction(value.raw, same[0].raw, where, "the field it is labelled with")


def wrong_persons(
    text: str, calls: Sequence[Call], sources: Callable[[], str]
) -> list[Contradiction]:
    """A person ``text`` names where the one record it names holds another: the answer
    names exactly one result row by an id, that row holds exactly one person's name
    (:func:`aem.evidence.names.person_name`), the answer says no word of it, and states a
    name that shares no word with it and that no source holds (``sources()``: the text the
    turn saw, read only when the rest holds). Names compare as names: transliterated,
    case-folded, titles aside — "Anna Smirnova" is "Анна Смирнова". A name is held by the
    sources when two of its words are (one, after a title)."""
    lowered = text.lower()
    named = [
        (where, key, person)
        for where, row in _records(calls)
        if len(people := _people(row)) == 1 and _names_by_id(row, lowered)
        for key, person in people
    ]
    if len(named) != 1:
        return []
    where, key, person = named[0]
    said = list(person_names(text))
    if any(name.shares_a_word(person) for name in said) or folded_words(text) & person.words:
        return []
    strangers = [name for name in said if not name.shares_a_word(person)]
    if not strangers:
        return []
    held = folded_words(sources())
    for name in strangers:
        # Held when two of its words are ("Hello Maria Lopez" greets a user the turn saw).
        if len(name.words & held) < min(2, len(name.words)):
            where_key = f"{where} {key}"
            return [Contradiction(name.raw, person.raw, where_key, "the person the record names")]
    return []


def _people(row: dict[str, Any]) -> list[tuple[str, PersonName]]:
    """The fields of ``row`` that hold a person's name, with their keys."""
    found = []
    for key, leaf in row.items():
        if isinstance(leaf, str) and len(leaf) <= 64 and (name := person_name(leaf)) is not None:
            found.append((str(key), name))
    return found


def _names_by_id(row: dict[str, Any], lowered: str) -> bool:
    return any(
        isinstance(leaf, str)
        and len(leaf) <= 64
        and _ID_LIKE.match(leaf) is not None
        and said_at_boundary(leaf.lower(), lowered)
        for leaf in row.values()
    )


# --- the table -----------------------------------------------------------------------------
# In the order they are tried. Each comment names the commit that made the rule and what
# it was measured on; ``unknown`` where the history does not say.
BINDINGS: RuleTable[Stated, Contradiction] = RuleTable(
    "bindings",
    (
        # a9246cb: "Total price: $503" against the one total_price (perturbation, tau-bench).
        Rule("labelled_field", ("tau-bench", "perturbation"), _labelled_field),
        # 41c578e (the bindings, made with the proof-and-suspect tests).
        Rule("call_result", ("unknown",), _call_result),
        # 41c578e; an ISO instant binds the day and the time said of its record (domains).
        Rule("record_field", ("unknown", "domains"), _record_field),
        Rule("list_count", ("unknown",), _list_count),
        Rule("one_measure", ("unknown",), _one_measure),
        Rule("near_miss", ("unknown",), _near_miss),
    ),
)
