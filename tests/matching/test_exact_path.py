"""The exact path (every tool once on each side, arguments ``==``) decides as the general one.

The general path is reached with the same calls by giving the agent's arguments as JSON
strings (they are parsed there, never ``==`` a dict), so the two results can be compared
through the public interface, field by field.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from aem.cases import ExpectedToolCall
from aem.matching import ActualCall, MatchSettings, ToolSetMatch, match_tool_calls
from bench.matching.workload import CATEGORIES, generate


def _fields(m: ToolSetMatch) -> tuple[Any, ...]:
    return (m.pairs, m.missing, m.extra, m.misordered, m.score, m.threshold, m.passed)


def _both(
    expected: list[Any], actual: list[dict[str, Any]], **kw: Any
) -> tuple[ToolSetMatch, ToolSetMatch]:
    as_dicts = [ActualCall(c["name"], c["arguments"]) for c in actual]
    as_json = [ActualCall(c["name"], json.dumps(c["arguments"])) for c in actual]
    return match_tool_calls(expected, as_dicts, **kw), match_tool_calls(expected, as_json, **kw)


@pytest.mark.parametrize("category", CATEGORIES)
def test_exact_and_general_paths_agree_on_every_category(category: str) -> None:
    for t in generate(per_category=15, seed=23):
        if t.category == category:
            exact, general = _both(t.expected, t.actual, order=t.order)
            assert _fields(exact) == _fields(general), t
            assert exact.passed == t.should_pass
            assert exact.explanation().splitlines()[0] == general.explanation().splitlines()[0]


def test_reordered_calls_pass_and_a_declared_order_still_fails() -> None:
    expected = [
        {"name": "get_order", "arguments": {"id": "ORD-1"}},
        {"name": "refund", "arguments": {"id": "ORD-1", "amount": 5}},
    ]
    actual = [{"name": c["name"], "arguments": dict(c["arguments"])} for c in reversed(expected)]
    free, _ = _both(expected, actual)
    assert free.passed and [(p.expected, p.actual) for p in free.pairs] == [(0, 1), (1, 0)]
    ordered, general = _both(expected, actual, order=[(0, 1)])
    assert not ordered.passed and ordered.misordered == general.misordered
    lenient = MatchSettings(order_violations_fail=False)
    assert _both(expected, actual, order=[(0, 1)], settings=lenient)[0].passed


def test_case_objects_and_a_tool_expected_twice_take_the_same_decisions() -> None:
    typed = [ExpectedToolCall(name="f", arguments={"a": 1}), ExpectedToolCall(name="g")]
    exact, general = _both(
        typed, [{"name": "g", "arguments": {}}, {"name": "f", "arguments": {"a": 1}}]
    )
    assert exact.passed and _fields(exact) == _fields(general)
    # f expected twice, f and g made once each: one f is missing, g is extra.
    twice = [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "arguments": {"a": 1}}]
    made = [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]
    exact, general = _both(twice, made)
    assert not exact.passed and exact.missing == [1] and exact.extra == [1]
    assert _fields(exact) == _fields(general)
