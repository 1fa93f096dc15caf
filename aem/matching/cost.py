"""Per-argument rules and the cost of pairing one expected call with one actual call.

Why a cost and not a yes/no: the optimal assignment must prefer a full match over a
same-name call with a wrong argument, and still pair the latter ("wrong argument")
rather than report a missing plus an extra call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from aem.compare.assignment import linear_sum_assignment
from aem.compare.core import SemanticComparator
from aem.compare.result import short
from aem.compare.structured import maybe_json
from aem.matching.result import ArgumentMismatch
from aem.matching.settings import MatchSettings

ANY_OF, IGNORE, SUBSET = 1, 2, 3
_RULE_KEYS = {"any_of": ANY_OF, "ignore": IGNORE, "subset": SUBSET}
_MISSING = object()
Rule = tuple[str, int, Any]


class CallRules:
    """An expected call's arguments, split once: plain values and rule objects.

    Plain values are most arguments; keeping them as the case's own dict lets a whole
    call match with one C-level ``dict ==`` (which implies semantic sameness: ``==``
    never holds for values the comparison would call different).

    >>> CallRules({"a": 1, "b": {"ignore": True}, "c": {"any_of": [1, 2]}}).special
    (('b', 2, True), ('c', 1, [1, 2]))
    """

    __slots__ = ("plain", "size", "special")
    plain: Mapping[str, Any]
    special: tuple[Rule, ...]

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.plain = arguments
        self.size = len(arguments)
        self.special = ()
        for value in arguments.values():
            if type(value) is dict:
                break
        else:
            return  # the common case: no rule objects at all
        special: list[Rule] = []
        for key, value in arguments.items():
            if type(value) is dict and len(value) == 1:  # rules are plain JSON objects
                ((rule_key, payload),) = value.items()
                kind = _RULE_KEYS.get(rule_key)
                if kind is not None and not (kind == IGNORE and payload is False):
                    special.append((key, kind, payload))
        self.special = tuple(special)
        if special:
            named = {key for key, _, _ in special}
            self.plain: Mapping[str, Any] = {k: v for k, v in arguments.items() if k not in named}
        else:
            self.plain = arguments
        self.size = len(arguments)


def _as_is(value: Any) -> Any:
    return value


def _fold(value: str) -> str:
    return " ".join(value.casefold().split())


class ArgumentJudge:
    """Compares argument values: ``==`` and case/space folding first, then the comparator."""

    __slots__ = ("comparator", "embed", "extra_keys", "parse")

    def __init__(self, comparator: SemanticComparator, settings: MatchSettings) -> None:
        self.comparator = comparator
        self.embed = settings.embed_text_arguments
        # ``compare.parse_json_strings`` governs nested values here as in the comparator.
        self.parse = maybe_json if comparator.settings.parse_json_strings else _as_is
        # Extra arguments allowed at the top level means extra keys allowed inside nested
        # objects too (a flight given with its origin as well as its number and date).
        self.extra_keys = settings.allow_extra_arguments

    def same(self, expected: Any, actual: Any) -> tuple[bool, str]:
        if type(expected) is type(actual):
            if expected == actual:
                return True, ""
            if isinstance(expected, str) and _fold(expected) == _fold(actual):
                return True, ""
        if self.extra_keys:
            nested = self._nested(self.parse(expected), self.parse(actual))
            if nested is not None:
                return nested
        result = self.comparator.compare(expected, actual, embed=self.embed)
        return result.same, result.reason

    def _nested(self, expected: Any, actual: Any) -> tuple[bool, str] | None:
        """Objects compared key by key over the expected keys; lists of them item by item
        (optimal pairing, same length). ``None``: not a structure, use the comparator."""
        if isinstance(expected, Mapping) and isinstance(actual, Mapping):
            return self.contains(expected, actual)
        if (
            isinstance(expected, list | tuple)
            and isinstance(actual, list | tuple)
            and any(isinstance(item, Mapping) for item in expected)
        ):
            if len(expected) != len(actual):
                return False, f"{len(expected)} items expected, {len(actual)} given"
            if not expected:
                return True, ""
            cost = np.array(
                [[0.0 if self.same(e, a)[0] else 1.0 for a in actual] for e in expected]
            )
            rows, cols = linear_sum_assignment(cost)
            bad = [int(r) for r, c in zip(rows, cols, strict=True) if cost[r, c] > 0]
            if bad:
                return (
                    False,
                    f"item {bad[0]}: {self.same(expected[bad[0]], actual[cols[bad[0]]])[1]}",
                )
            return True, ""
        return None

    def contains(self, expected: Any, actual: Any) -> tuple[bool, str]:
        """``actual`` holds every key / item of ``expected`` (items paired optimally)."""
        expected, actual = self.parse(expected), self.parse(actual)
        if isinstance(expected, Mapping) and isinstance(actual, Mapping):
            for key, value in expected.items():
                if key not in actual:
                    return False, f"key {key!r} missing"
                ok, why = self.same(value, actual[key])
                if not ok:
                    return False, f"{key}: {why}"
            return True, ""
        if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
            if not expected:
                return True, ""
            if len(actual) < len(expected):
                return False, f"{len(expected)} items expected at least, {len(actual)} given"
            cost = np.array(
                [[0.0 if self.same(e, a)[0] else 1.0 for a in actual] for e in expected]
            )
            rows, cols = linear_sum_assignment(cost)
            if cost[rows, cols].sum() > 0:
                return False, f"{short(actual)} does not contain {short(expected)}"
            return True, ""
        return self.same(expected, actual)


def argument_mismatches(
    rules: CallRules,
    actual: Mapping[str, Any],
    judge: ArgumentJudge,
    allow_extra: bool,
) -> list[ArgumentMismatch]:
    """Every argument of ``actual`` that breaks the expected call's rules (empty = match)."""
    plain = rules.plain
    if not rules.special and (actual == plain if not allow_extra else _covers(plain, actual)):
        return []  # the hot path: the call is simply right
    found: list[ArgumentMismatch] = []
    for key, expected in plain.items():
        value = actual.get(key, _MISSING)
        if value is _MISSING:
            found.append(ArgumentMismatch(key, expected, None, "argument not passed"))
            continue
        if type(value) is type(expected) and value == expected:
            continue
        ok, why = judge.same(expected, value)
        if not ok:
            found.append(ArgumentMismatch(key, expected, value, why))
    for key, kind, expected in rules.special:
        if kind == IGNORE:
            continue
        value = actual.get(key, _MISSING)
        if value is _MISSING:
            found.append(ArgumentMismatch(key, expected, None, "argument not passed"))
            continue
        if kind == ANY_OF:
            options = expected if isinstance(expected, list | tuple) else [expected]
            ok = any(judge.same(option, value)[0] for option in options)
            why = f"none of {short(list(options))} matches"
        else:
            ok, why = judge.contains(expected, value)
        if not ok:
            found.append(ArgumentMismatch(key, expected, value, why))
    if not allow_extra and len(actual) > rules.size:
        for key, value in actual.items():
            if key not in plain and all(key != k for k, _, _ in rules.special):
                found.append(ArgumentMismatch(key, None, value, "unexpected argument"))
    return found


def _covers(plain: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Every plain expected argument is passed with an ``==`` value (extras allowed)."""
    if len(actual) == len(plain):
        return actual == plain
    missing = _MISSING
    return all(actual.get(key, missing) == value for key, value in plain.items())
