"""The rule checks exactly as the seed states them, and the skip rule for missing fields."""

from __future__ import annotations

import pytest

from aem.checks.json_schema import JsonSchemaCheck
from aem.checks.tool_calls import ToolCallsCheck, ToolCallsSettings
from aem.foundation.model import Outcome
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric

SCHEMA = {
    "type": "object",
    "required": ["topic", "urgent"],
    "properties": {
        "topic": {"type": "string"},
        "urgent": {"type": "boolean"},
        "email": {"type": "string", "format": "email"},
    },
}
BODY = '{"topic": "delivery", "urgent": true}'


def schema_verdict(answer: str, schema: dict = SCHEMA) -> tuple[Outcome, str]:
    session = make_session(make_turn("answer", text=answer))
    (found,) = run_metric(JsonSchemaCheck(), session, make_case(json_schema=schema))
    return found.outcome, found.explanation


@pytest.mark.parametrize(
    ("answer", "outcome", "why"),
    [
        (BODY, Outcome.PASS, "only JSON"),
        (f"```json\n{BODY}\n```", Outcome.PASS, "only JSON"),
        (f"```\n{BODY}\n```", Outcome.PASS, "only JSON"),
        (f"```yaml\n{BODY}\n```", Outcome.PASS, "only JSON"),
        (f"Here is the ticket data: {BODY}", Outcome.FAIL, "text before the JSON"),
        (f"{BODY}\nLet me know if you need more.", Outcome.FAIL, "text after the JSON"),
        (f"```json\n{BODY}\n```\n```json\n{BODY}\n```", Outcome.FAIL, "2 code blocks"),
        ('{"topic": "delivery", "urgent": true,}', Outcome.FAIL, "not valid JSON"),
        (
            '{"topic": "delivery", "urgent": "yes"}',
            Outcome.FAIL,
            "at $.urgent: expected type 'boolean', got \"yes\"",
        ),
    ],
    ids=[
        "raw",
        "json-block",
        "bare-block",
        "yaml-block",
        "sentence-before",
        "sentence-after",
        "two-blocks",
        "invalid-json",
        "schema-violation",
    ],
)
def test_json_schema_seed_verdicts(answer: str, outcome: Outcome, why: str) -> None:
    got, explanation = schema_verdict(answer)
    assert got is outcome and why in explanation


def test_json_schema_checks_formats_and_names_the_path() -> None:
    got, why = schema_verdict('{"topic": "x", "urgent": false, "email": "not-an-email"}')
    assert got is Outcome.FAIL and "$.email" in why and "format" in why


def test_json_schema_text_around_a_block_fails() -> None:
    got, why = schema_verdict(f"Here you go:\n```json\n{BODY}\n```")
    assert got is Outcome.FAIL and "text before the code block" in why


def test_a_case_without_the_field_is_skipped_with_the_reason() -> None:
    session = make_session(make_turn("answer", text=BODY))
    (found,) = run_metric(JsonSchemaCheck(), session, make_case(question="q"))
    assert found.outcome is Outcome.SKIP and "json_schema" in found.explanation
    assert run_metric(JsonSchemaCheck(), session, None) == []


EXPECTED = [{"name": "orders_get_status"}, {"name": "returns_create"}, {"name": "refunds_get"}]


def tool_share(*turns, threshold: float = 100.0, expected=EXPECTED):  # type: ignore[no-untyped-def]
    session = make_session(*turns, make_turn("answer", text="done"))
    metric = ToolCallsCheck(ToolCallsSettings(threshold=threshold))
    (found,) = run_metric(metric, session, make_case(expected_tool_calls=expected))
    return found


def test_two_of_three_is_67_percent_fails_at_100_passes_at_50() -> None:
    calls = (
        make_tool_call("orders_get_status", {"id": 1}, result="ok"),
        make_tool_call("returns_create", {"id": 1}, result="ok"),
    )
    strict, lenient = tool_share(*calls), tool_share(*calls, threshold=50)
    assert strict.outcome is Outcome.FAIL and lenient.outcome is Outcome.PASS
    assert "2 of 3 functions called (67%" in strict.explanation
    assert strict.score == pytest.approx(66.7) and "refunds_get" in strict.explanation


def test_an_errored_call_counts() -> None:
    found = tool_share(
        make_tool_call("orders_get_status", {}, error="500 boom"),
        expected=[{"name": "orders_get_status"}],
    )
    assert found.outcome is Outcome.PASS


def test_order_and_arguments_are_ignored() -> None:
    found = tool_share(
        make_tool_call("refunds_get", {"anything": 1}, result=1),
        make_tool_call("returns_create", "not even json", result=1),
        make_tool_call("orders_get_status", {"wrong": "args"}, result=1),
    )
    assert found.outcome is Outcome.PASS and found.score == 100.0


def test_fifty_percent_with_two_functions_passes_on_either() -> None:
    two = [{"name": "orders_get_status"}, {"name": "returns_create"}]
    for name in ("orders_get_status", "returns_create"):
        found = tool_share(make_tool_call(name, {}, result=1), threshold=50, expected=two)
        assert found.outcome is Outcome.PASS


def test_threshold_range_is_one_to_one_hundred() -> None:
    with pytest.raises(ValueError):
        ToolCallsSettings(threshold=0)
    with pytest.raises(ValueError):
        ToolCallsSettings(threshold=101)


def test_match_tools_scopes_the_functions_required() -> None:
    session = make_session(make_tool_call("add", {}, result=5), make_turn("answer", text="5"))
    case = make_case(expected_tool_calls=[{"name": "add"}, {"name": "lookup"}], match_tools=["add"])
    (found,) = run_metric(ToolCallsCheck(), session, case)
    assert found.outcome is Outcome.PASS and "1 of 1" in found.explanation
