"""Per-argument rules and the cost of pairing one expected call with one actual call.

Why a cost and not a yes/no: the optimal assignment must prefer a full match over a
same-name call with a wrong argument, and still pair the latter ("wrong argument")
rather than report a missing plus an extra call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from aem.compare.core import SemanticComparator
from aem.compare.result import short
from aem.compare.settings import MatchSettings
from aem.compare.structured import maybe_json
from aem.matching.result import ArgumentMismatch

VALUE, ANY_OF, IGNORE, SUBSET = 0, 1, 2, 3
_RULE_KEYS = {"any_of": ANY_OF, "ignore": IGNORE, "subset": SUBSET}
_MISSING = object()
Rule = tuple[str, int, Any]


def compile_rules(arguments: Mapping[str, Any]) -> tuple[Rule, ...]:
    """Read ``{"any_of": [...]}``, ``{"ignore": true}``, ``{"subset": ...}`` once per case.

    >>> compile_rules({"a": 1, "b": {"ignore": True}, "c": {"any_of": [1, 2]}})
    (('a', 0, 1), ('b', 2, True), ('c', 1, [1, 2]))
    """
    rules: list[Rule] = []
    for key, value in arguments.items():
        if isinstance(value, Mapping) and len(value) == 1:
            ((rule_key, payload),) = value.items()
            kind = _RULE_KEYS.get(rule_key)
            if kind is not None and not (kind == IGNORE and payload is False):
                rules.append((key, kind, payload))
                continue
        rules.append((key, VALUE, value))
    return tuple(rules)


def _fold(value: str) -> str:
    return " ".join(value.casefold().split())


class ArgumentJudge:
    """Compares argument values: ``==`` and case/space folding first, then the comparator."""

    __slots__ = ("comparator", "embed")

    def __init__(self, comparator: SemanticComparator, settings: MatchSettings) -> None:
        self.comparator = comparator
        self.embed = settings.embed_text_arguments

    def same(self, expected: Any, actual: Any) -> tuple[bool, str]:
        if type(expected) is type(actual):
            if expected == actual:
                return True, ""
            if isinstance(expected, str) and _fold(expected) == _fold(actual):
                return True, ""
        result = self.comparator.compare(expected, actual, embed=self.embed)
        return result.same, result.reason

    def contains(self, expected: Any, actual: Any) -> tuple[bool, str]:
        """``actual`` holds every key / item of ``expected`` (items paired optimally)."""
        expected, actual = maybe_json(expected), maybe_json(actual)
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
    rules: tuple[Rule, ...],
    actual: Mapping[str, Any],
    judge: ArgumentJudge,
    allow_extra: bool,
) -> list[ArgumentMismatch]:
    """Every argument of ``actual`` that breaks the expected call's rules (empty = match)."""
    found: list[ArgumentMismatch] = []
    for key, kind, expected in rules:
        if kind == IGNORE:
            continue
        value = actual.get(key, _MISSING)
        if value is _MISSING:
            found.append(ArgumentMismatch(key, expected, None, "argument not passed"))
            continue
        if kind == VALUE:
            if type(value) is type(expected) and value == expected:
                continue  # the hot path: most arguments are simply equal
            ok, why = judge.same(expected, value)
        elif kind == ANY_OF:
            options = expected if isinstance(expected, list | tuple) else [expected]
            ok = any(judge.same(option, value)[0] for option in options)
            why = f"none of {short(list(options))} matches"
        else:
            ok, why = judge.contains(expected, value)
        if not ok:
            found.append(ArgumentMismatch(key, expected, value, why))
    if not allow_extra and len(actual) > len(rules):
        named = {key for key, _, _ in rules}
        for key, value in actual.items():
            if key not in named:
                found.append(ArgumentMismatch(key, None, value, "unexpected argument"))
    return found
