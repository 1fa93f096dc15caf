"""tool_choice and argument_validity: the case decides what was expected."""

from __future__ import annotations

from typing import Any

from aem.evaluate import Evaluator
from aem.foundation.model import SessionReport
from aem.testing import make_case, make_session, make_tool_call, make_turn

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _weather(city: Any = "Paris") -> Any:
    """get_weather and add in parallel, both read by the answer (as in the sample trace)."""
    return make_session(
        make_tool_call("get_weather", {"city": city}, result="rainy, 14C"),
        make_tool_call("add", {"a": 2, "b": 3}, result=5),
        make_turn("answer", "weather_agent", text="Paris is rainy (14C) and 2+3=5."),
        edges=[("t1", "t3"), ("t2", "t3")],
        tool_definitions={"get_weather": SCHEMA},
    )


def _audit(case: dict[str, Any] | None = None, city: Any = "Paris") -> SessionReport:
    cases = {"s1": make_case(**case)} if case is not None else {}
    return Evaluator(cases=cases).evaluate(_weather(city))


def _verdicts(report: SessionReport, metric: str) -> dict[str, tuple[str, str]]:
    return {
        t.name: (m.outcome.value, m.explanation)
        for t in report.turns
        for m in t.metrics
        if m.name == metric
    }


def test_equivalent_formats_pass() -> None:
    report = _audit(
        {
            "expected_tool_calls": [
                {"name": "add", "arguments": {"a": "2", "b": 3.0}},
                {"name": "get_weather", "arguments": {"city": " PARIS "}},
            ]
        }
    )
    assert report.root_causes == []
    assert {k: v[0] for k, v in _verdicts(report, "argument_validity").items()} == {
        "get_weather": "pass",
        "add": "pass",
    }


def test_wrong_argument_names_the_argument_and_both_values() -> None:
    report = _audit(
        {
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "London"}},
                {"name": "add", "arguments": {"a": 2, "b": 3}},
            ]
        }
    )
    outcome, why = _verdicts(report, "argument_validity")["get_weather"]
    assert outcome == "fail" and "city" in why and "London" in why and "Paris" in why
    [cause] = report.root_causes
    assert cause.name == "get_weather" and cause.metrics == ["argument_validity"]
    assert report.turns[-1].label == "ok"  # it passed its own metrics; nothing to inherit


def test_missing_call_fails_the_final_turn() -> None:
    report = _audit(
        {
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "get_time", "arguments": {"city": "Paris"}},
            ]
        }
    )
    outcome, why = _verdicts(report, "tool_choice")["weather_agent"]
    assert outcome == "fail" and "get_time" in why
    assert report.root_causes[0].kind == "answer"


def test_extra_call_and_match_tools() -> None:
    extra = _audit({"expected_tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]})
    outcome, why = _verdicts(extra, "tool_choice")["get_weather"]
    assert outcome == "pass" and why.startswith("extra look-up `get_weather`: allowed")
    lookups_too = _audit(
        {
            "expected_tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
            "extra_calls": "fail",  # this case's own strictness
        }
    )
    assert _verdicts(lookups_too, "tool_choice")["get_weather"][0] == "fail"
    scoped = _audit(
        {
            "expected_tool_calls": [
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "lookup", "arguments": {}},
            ],
            "match_tools": ["add"],
        }
    )
    verdicts = _verdicts(scoped, "tool_choice")
    assert verdicts["get_weather"][0] == "skip" and verdicts["add"][0] == "pass"
    assert scoped.root_causes == []  # `lookup` is outside match_tools: not required


def test_declared_order_is_enforced_only_for_its_pair() -> None:
    calls = [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "add", "arguments": {"a": 2, "b": 3}},
    ]
    assert _audit({"expected_tool_calls": calls, "order": [[0, 1]]}).root_causes == []
    wrong = _audit({"expected_tool_calls": calls, "order": [[1, 0]]})
    outcome, why = _verdicts(wrong, "tool_choice")["get_weather"]
    assert outcome == "fail" and "order" in why


def test_declared_json_schema_is_checked_without_a_case() -> None:
    outcome, why = _verdicts(_audit(city=5), "argument_validity")["get_weather"]
    assert outcome == "fail" and "JSON Schema" in why and "city" in why
    assert _verdicts(_audit(), "argument_validity")["get_weather"][0] == "pass"
    assert _verdicts(_audit(), "argument_validity")["add"][0] == "skip"  # no schema, no case


def test_each_session_is_checked_against_its_own_declared_schema() -> None:
    """Validators are reused across sessions by schema content, never by tool name: one
    evaluator sees the same tool declared three ways, and each session gets its own."""
    evaluator = Evaluator()

    def verdict(schema: dict[str, Any], city: Any) -> str:
        session = make_session(
            make_tool_call("get_weather", {"city": city}, result="rainy"),
            make_turn("answer", "weather_agent", text="It is rainy."),
            edges=[("t1", "t2")],
            tool_definitions={"get_weather": schema},
        )
        return _verdicts(evaluator.evaluate(session), "argument_validity")["get_weather"][0]

    integer_city = {**SCHEMA, "properties": {"city": {"type": "integer"}}}
    assert verdict(SCHEMA, 5) == "fail"
    assert verdict(integer_city, 5) == "pass"  # same tool, another schema
    assert verdict(SCHEMA, 5) == "fail"  # the first schema's validator, reused
    unusable = {"type": "object", "properties": {"city": {"type": 7}}}
    assert verdict(unusable, 5) == "skip"
    assert verdict(unusable, "Paris") == "skip"  # an unusable schema is said so every time
