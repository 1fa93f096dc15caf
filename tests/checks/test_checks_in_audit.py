"""Checks in ``aem audit``: they run only where the case or the configuration asks, a
precondition the session lacks is a skip with the reason, and a missing call is reported
once — by ``tool_choice``, the audit metric of ``expected_tool_calls``."""

from __future__ import annotations

from aem.cases import Case
from aem.checks.json_schema import JsonSchemaCheck
from aem.checks.relevance import RelevanceCheck
from aem.checks.tool_calls import ToolCallsCheck
from aem.config import load_config
from aem.evaluate import Evaluator
from aem.foundation.model import MetricResult, Outcome, Session
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric

CHECKS = (
    "check.relevance",
    "check.faithfulness",
    "check.task_completion",
    "check.json_schema",
    "check.tool_calls",
)


def audit(session: Session, case: Case, *overrides: str) -> list[MetricResult]:
    """Every result ``aem audit`` gives on ``session`` with ``case`` and ``overrides``."""
    report = Evaluator(load_config(overrides=list(overrides)), {case.session_id: case}).evaluate(
        session
    )
    return [m for t in report.turns for m in t.metrics]


def named(results: list[MetricResult], name: str) -> list[MetricResult]:
    return [r for r in results if r.name == name]


def ends_on_a_tool_call() -> Session:
    """A function-calling session: the agent's last act is a call, no text answer."""
    return make_session(
        make_turn("reasoning", text="the user wants the order cancelled"),
        make_tool_call("cancel_order", {"order_id": "W1"}, result={"status": "cancelled"}),
    )


def test_checks_are_absent_from_an_audit_that_does_not_ask_for_them() -> None:
    case = make_case(
        question="Cancel order W1",
        reference_answer="cancelled",
        expected_tool_calls=[{"name": "cancel_order"}, {"name": "refund_order"}],
    )
    results = audit(ends_on_a_tool_call(), case)
    assert not [r for r in results if r.name in CHECKS]
    # the audit metric of expected_tool_calls still reports the missing call
    [missing] = [r for r in named(results, "tool_choice") if r.outcome is Outcome.FAIL]
    assert "refund_order" in missing.explanation


def test_a_case_with_a_json_schema_asks_for_check_json_schema() -> None:
    session = make_session(make_turn("answer", text='{"topic": "delivery"}'))
    case = make_case(json_schema={"type": "object", "required": ["topic"]})
    [found] = named(audit(session, case), "check.json_schema")
    assert found.outcome is Outcome.PASS
    assert not named(audit(session, make_case(question="q")), "check.json_schema")


def test_a_configured_llm_check_without_a_judge_skips_not_fails() -> None:
    asked = 'metrics."check.relevance".threshold=8'
    case = make_case(question="Cancel order W1")
    [on_call] = named(audit(ends_on_a_tool_call(), case, asked), "check.relevance")
    assert on_call.outcome is Outcome.SKIP and "no final answer" in on_call.explanation
    answered = make_session(make_turn("answer", text="Order W1 is cancelled."))
    [no_judge] = named(audit(answered, case, asked), "check.relevance")
    assert no_judge.outcome is Outcome.SKIP and "no judge configured" in no_judge.explanation
    [no_field] = named(audit(answered, make_case(json_schema={}), asked), "check.relevance")
    assert no_field.outcome is Outcome.SKIP and "no question" in no_field.explanation
    assert not named(audit(answered, case), "check.relevance")  # not configured: absent


def test_preconditions_skip_in_an_audit_and_fail_by_the_rubric_in_a_test() -> None:
    session, case = ends_on_a_tool_call(), make_case(json_schema={"type": "object"})
    [in_test] = run_metric(JsonSchemaCheck(), session, case)
    [in_audit] = run_metric(JsonSchemaCheck().for_audit(False, ()), session, case)
    assert in_test.outcome is Outcome.FAIL and in_test.score == 0.0
    assert in_audit.outcome is Outcome.SKIP and "no final answer" in in_audit.explanation
    question = make_case(question="Cancel order W1")
    [judged_in_test] = run_metric(RelevanceCheck(), session, question)
    assert judged_in_test.outcome is Outcome.FAIL  # a test's unanswered case scores 0
    assert run_metric(RelevanceCheck().for_audit(False, ()), session, question) == []


def test_a_missing_call_is_reported_once_by_tool_choice() -> None:
    session = make_session(
        make_tool_call("get_order", {"order_id": "W1"}, result={"status": "pending"}),
        make_turn("answer", text="Your order is pending."),
    )
    case = make_case(expected_tool_calls=[{"name": "get_order"}, {"name": "cancel_order"}])
    results = audit(session, case, 'metrics."check.tool_calls".threshold=50')
    failures = [r for r in results if r.outcome is Outcome.FAIL]
    assert [r.name for r in failures if "cancel_order" in r.explanation] == ["tool_choice"]
    [check] = named(results, "check.tool_calls")
    assert check.outcome is Outcome.PASS and "1 of 1 functions called" in check.explanation
    assert "left to tool_choice, which reports them missing: cancel_order" in check.explanation


def test_check_tool_calls_skips_when_tool_choice_reports_every_missing_call() -> None:
    session = make_session(make_turn("answer", text="Done."))
    case = make_case(expected_tool_calls=[{"name": "cancel_order"}])
    [check] = named(
        audit(session, case, 'metrics."check.tool_calls".threshold=100'), "check.tool_calls"
    )
    assert check.outcome is Outcome.SKIP and "reported by tool_choice" in check.explanation
    # tool_choice switched off: the check is the only one to report it
    off = audit(
        session,
        case,
        'metrics."check.tool_calls".threshold=100',
        'metrics.disabled=["tool_choice"]',
    )
    [check] = named(off, "check.tool_calls")
    assert check.outcome is Outcome.FAIL and "not called: cancel_order" in check.explanation


def test_a_dataset_test_counts_every_function_as_before() -> None:
    session = make_session(make_turn("answer", text="Done."))
    case = make_case(expected_tool_calls=[{"name": "cancel_order"}])
    [check] = run_metric(ToolCallsCheck(), session, case)
    assert check.outcome is Outcome.FAIL and "0 of 1 functions called" in check.explanation
