"""Tool-set matching: optimal pairing, per-argument rules, partial order, explanations."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from aem.cases import ExpectedToolCall
from aem.matching import ActualCall, MatchSettings, match_tool_calls
from aem.matching.effects import DeclaredEffects, ToolEffects


def call(name: str, **arguments: object) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_same_name_with_wrong_argument_pairs_as_wrong_argument() -> None:
    m = match_tool_calls(
        [call("refund", order_id="ORD-42", amount=120.5)],
        [ActualCall("refund", {"order_id": "ORD-43", "amount": "120.50"})],
    )
    assert m.missing == [] and m.extra == []
    (pair,) = m.pairs
    assert not pair.ok
    (bad,) = pair.argument_mismatches
    assert (bad.argument, bad.expected, bad.actual) == ("order_id", "ORD-42", "ORD-43")
    assert m.score == 0.0 and not m.passed
    assert "wrong argument" in m.explanation() and "order_id" in m.explanation()


def test_full_match_preferred_over_wrong_argument() -> None:
    m = match_tool_calls(
        [call("get", id=1)], [ActualCall("get", {"id": 2}), ActualCall("get", {"id": 1})]
    )
    assert [(p.expected, p.actual, p.ok) for p in m.pairs] == [(0, 1, True)]
    assert m.extra == [0] and m.allowed_extra == [0] and m.passed  # a second look-up
    strict = match_tool_calls(
        [call("get", id=1)],
        [ActualCall("get", {"id": 2}), ActualCall("get", {"id": 1})],
        settings=MatchSettings(extra_calls="fail"),
    )
    assert strict.extra == [0] and not strict.passed and strict.score == 1.0


def test_missing_and_extra_calls_are_named() -> None:
    m = match_tool_calls(
        [call("search", q="x"), call("book", id="B1")],
        [ActualCall("search", {"q": "x"}), ActualCall("cancel", {"id": "B1"}, ref="t3")],
    )
    assert m.missing == [1] and m.extra == [1]
    assert m.score == 0.5
    text = m.explanation()
    assert "missing: expected #1 book(id='B1') was never called" in text
    assert "extra: actual #1 cancel(id='B1') in turn t3" in text


def test_greedy_trap_is_paired_optimally() -> None:
    expected = [call("f", a=1), call("f", a=1, b=2)]
    actual = [ActualCall("f", {"a": 1, "b": 2}), ActualCall("f", {"a": 1})]
    m = match_tool_calls(expected, actual)
    assert m.passed and [(p.expected, p.actual) for p in m.pairs] == [(0, 1), (1, 0)]


def test_two_identical_expected_calls_need_two_calls() -> None:
    expected = [call("f", x=1), call("f", x=1)]
    assert match_tool_calls(expected, [ActualCall("f", {"x": 1})] * 2).score == 1.0
    once = match_tool_calls(expected, [ActualCall("f", {"x": 1})])
    assert once.score == 0.5 and once.missing == [1] and not once.passed


def test_partial_order_checked_only_for_declared_pairs() -> None:
    expected = [call("read", path="/a"), call("lookup", k=1), call("write", path="/a")]
    ok = [
        ActualCall("lookup", {"k": 1}),
        ActualCall("read", {"path": "/a"}),
        ActualCall("write", {"path": "/a"}),
    ]
    assert match_tool_calls(expected, ok, order=[(0, 2)]).passed
    bad = [ok[2], ok[0], ok[1]]
    m = match_tool_calls(expected, bad, order=[(0, 2)])
    assert not m.passed and m.score == 1.0
    (v,) = m.misordered
    assert (v.before, v.after, v.actual_before, v.actual_after) == (0, 2, 2, 0)
    assert "misordered" in m.explanation()
    lenient = MatchSettings(order_violations_fail=False)
    assert match_tool_calls(expected, bad, order=[(0, 2)], settings=lenient).passed


def test_order_uses_the_natural_pairing_of_identical_calls() -> None:
    expected = [call("read", p=1), call("write", p=1)]
    actual = [
        ActualCall("read", {"p": 1}),
        ActualCall("write", {"p": 1}),
        ActualCall("read", {"p": 1}),
    ]
    m = match_tool_calls(expected, actual, order=[(0, 1)])
    assert m.misordered == [] and m.extra == [2]


def test_any_of_ignore_and_subset_rules() -> None:
    expected = [
        call(
            "search",
            cabin={"any_of": ["economy", "basic"]},
            session={"ignore": True},
            tags={"subset": ["a", "b"]},
        )
    ]
    good = ActualCall("search", {"cabin": "Basic", "session": "xyz", "tags": ["b", "c", "a"]})
    assert match_tool_calls(expected, [good]).passed
    bad = ActualCall("search", {"cabin": "first", "tags": ["a"]})
    m = match_tool_calls(expected, [bad])
    assert {x.argument for x in m.pairs[0].argument_mismatches} == {"cabin", "tags"}


def test_extra_arguments_allowed_or_not() -> None:
    expected = [call("get", id="A1")]
    actual = [ActualCall("get", {"id": "a1", "verbose": True})]
    assert match_tool_calls(expected, actual).passed
    strict = MatchSettings(allow_extra_arguments=False)
    m = match_tool_calls(expected, actual, settings=strict)
    (bad,) = m.pairs[0].argument_mismatches
    assert bad.argument == "verbose" and bad.reason == "unexpected argument"


def test_missing_argument_is_a_mismatch() -> None:
    m = match_tool_calls(
        [call("get", id="A1", day="2026-03-01")], [ActualCall("get", {"id": "A1"})]
    )
    (bad,) = m.pairs[0].argument_mismatches
    assert bad.argument == "day" and bad.actual is None and bad.reason == "argument not passed"


def test_match_tools_makes_other_calls_free() -> None:
    expected = [call("refund", order_id="ORD-1")]
    actual = [
        ActualCall("lookup", {"q": 1}),
        ActualCall("refund", {"order_id": "ord 1"}),
        ActualCall("refund", {"order_id": "ORD-2"}),
    ]
    m = match_tool_calls(expected, actual, match_tools=["refund"])
    assert m.extra == [2] and not m.passed
    assert match_tool_calls(expected, actual[:2], match_tools=["refund"]).passed
    assert match_tool_calls(expected, actual[:2]).extra == [0]


def test_partial_credit_against_threshold() -> None:
    expected = [call("a"), call("b"), call("c"), call("d")]
    actual = [ActualCall(n, {}) for n in "abc"]
    m = match_tool_calls(expected, actual, settings=MatchSettings(pass_threshold=0.75))
    assert m.score == 0.75 and m.threshold == 0.75 and m.passed
    assert not match_tool_calls(expected, actual).passed


def test_inputs_as_case_models_and_json_strings() -> None:
    expected = [ExpectedToolCall(name="book", arguments={"date": "2026-03-01", "seats": 2})]
    actual = [ActualCall("book", json.dumps({"date": "March 1, 2026", "seats": "2"}))]
    assert match_tool_calls(expected, actual).passed


def test_text_arguments_are_not_embedded_on_the_matching_path() -> None:
    from aem.compare import SemanticComparator

    comparator = SemanticComparator()
    m = match_tool_calls(
        [call("note", text="The flight is delayed")],
        [ActualCall("note", {"text": "Your flight departs late"})],
        comparator=comparator,
    )
    assert not m.passed and not comparator.model_loaded


def test_empty_reference() -> None:
    assert match_tool_calls([], []).passed
    m = match_tool_calls([], [ActualCall("x", {})])
    assert m.score == 1.0 and m.extra == [0] and not m.passed


def _satisfies(expected: dict[str, Any], actual: ActualCall) -> bool:
    return all(actual.arguments.get(k) == v for k, v in expected["arguments"].items())


def _brute_force_best(
    expected: list[dict[str, object]], actual: list[ActualCall]
) -> tuple[int, int]:
    """(pairs, ok pairs) of the best same-name pairing, by trying every assignment."""
    best = (0, 0)
    n, m = len(expected), len(actual)
    for perm in itertools.permutations(range(m), min(n, m)) if n <= m else []:
        pairs = [(i, j) for i, j in enumerate(perm) if expected[i]["name"] == actual[j].name]
        ok = sum(1 for i, j in pairs if _satisfies(expected[i], actual[j]))
        best = max(best, (len(pairs), ok))
    return best


calls = st.lists(
    st.tuples(st.sampled_from("fg"), st.sampled_from([{}, {"a": 1}, {"a": 1, "b": 2}, {"a": 2}])),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(calls, calls, st.randoms())
def test_pairing_is_optimal_and_order_free(exp: list, act: list, rnd: random.Random) -> None:
    expected = [call(n, **a) for n, a in exp]
    actual = [ActualCall(n, dict(a)) for n, a in act]
    m = match_tool_calls(expected, actual)
    if len(expected) <= len(actual):
        assert (len(m.pairs), sum(p.ok for p in m.pairs)) == _brute_force_best(expected, actual)
    shuffled = list(actual)
    rnd.shuffle(shuffled)
    again = match_tool_calls(expected, shuffled)
    assert again.score == m.score and len(again.extra) == len(m.extra)
    assert len(again.missing) == len(m.missing)


def test_extra_calls_by_kind_under_each_setting() -> None:
    expected = [call("book_flight", id="F1")]
    actual = [
        ActualCall("fs.ls", {}),
        ActualCall("getUserProfile", {"user": "u"}),
        ActualCall("book_flight", {"id": "F1"}),
        ActualCall("frobnicate", {}),
        ActualCall("cancel-booking", {"id": "B2"}),
    ]
    writes = match_tool_calls(expected, actual)
    assert writes.extra == [0, 1, 3, 4] and writes.allowed_extra == [0, 1] and not writes.passed
    assert writes.extra_effects[0].why == "read verb 'ls'"
    text = writes.explanation()
    assert "extra: actual #0 fs.ls() matches no expected call; allowed: a look-up" in text
    assert "extra: actual #4 cancel-booking(id='B2') matches no expected call\n" in text + "\n"
    assert match_tool_calls(expected, actual[:3]).passed
    fail = match_tool_calls(expected, actual[:3], settings=MatchSettings(extra_calls="fail"))
    assert fail.allowed_extra == [] and not fail.passed
    allow = match_tool_calls(expected, actual, settings=MatchSettings(extra_calls="allow"))
    assert allow.allowed_extra == [0, 1, 3, 4] and allow.passed
    # the older switch still loads and still decides
    assert match_tool_calls(expected, actual, settings=MatchSettings(extra_calls_fail=False)).passed
    assert not match_tool_calls(
        expected, actual[:3], settings=MatchSettings(extra_calls_fail=True)
    ).passed


def test_declared_effects_override_the_name() -> None:
    expected = [call("book_flight", id="F1")]
    actual = [ActualCall("book_flight", {"id": "F1"}), ActualCall("run_sql", {"q": "select"})]
    assert not match_tool_calls(expected, actual).passed  # "run" names no read
    effects = ToolEffects([DeclaredEffects("the case's", read_only=["run_sql"])])
    m = match_tool_calls(expected, actual, effects=effects)
    assert m.passed and m.extra_effects[1].why == "the case's read_only_tools"


def test_optional_expected_calls_are_the_minimum_minus_them() -> None:
    expected = [call("get_user", id="u1"), call("cancel", id="B1")]
    made = [ActualCall("cancel", {"id": "B1"})]
    m = match_tool_calls(expected, made, optional=[0])
    assert m.passed and m.missing == [] and m.not_required == [0] and m.score == 1.0
    assert "not required: expected #0 get_user(id='u1') was not called (optional)" in (
        m.explanation()
    )
    assert not match_tool_calls(expected, made).passed  # not optional: missing
    both = [ActualCall("get_user", {"id": "u2"}), ActualCall("cancel", {"id": "B1"})]
    wrong = match_tool_calls(expected, both, optional=[0])
    assert wrong.not_required == [] and not wrong.passed  # made: matched like any other
    skipped_write = match_tool_calls(expected, [ActualCall("get_user", {"id": "u1"})], optional=[0])
    assert skipped_write.missing == [1] and not skipped_write.passed
