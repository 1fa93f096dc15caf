"""A fail is a proof: every ``fail`` in a report carries at least one Evidence item that
quotes what is wrong (an ``actual``, an ``expected`` or a ``detail``).

Checked on every bundled input the golden reports pin (the sample traces with their
cases, the instrumented fixtures, the tau-bench slice) and on generated sessions built to
make each built-in metric fail, so a new fail path without evidence is caught even where
no bundled trace reaches it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from aem.cases import Case
from aem.evaluate import Evaluator
from aem.foundation.model import MetricResult, Outcome, Session, SessionReport
from aem.settings import AemConfig
from aem.testing import make_session, make_tool_call, make_turn
from scripts.golden_reports import INPUTS, render
from tests.groundedness_kit import rag_session

RETURNS = [
    "Items can be returned within 30 days of purchase.",
    "Refunds are issued to the original payment method.",
]


def _quotes(evidence: dict[str, Any]) -> bool:
    return any(
        evidence.get(key) not in (None, "", [], {}) for key in ("actual", "expected", "detail")
    )


def _unproven(results: list[dict[str, Any]]) -> list[str]:
    """The fails of ``results`` without a quoting evidence item, named for the message."""
    return [
        f"{r['turn_id']} {r['name']}: {r['explanation'][:120]}"
        for r in results
        if r["outcome"] == Outcome.FAIL.value and not any(_quotes(e) for e in r["evidence"])
    ]


def _results(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for s in report["sessions"] for t in s["turns"] for m in t["metrics"]]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_fail_on_the_bundled_inputs_quotes_evidence(name: str) -> None:
    results = _results(json.loads(render(name)))
    assert any(r["outcome"] == "fail" for r in results) or name == "instrumented"
    assert _unproven(results) == []


def _case(session: Session, **fields: Any) -> dict[str, Case]:
    sid = session.session_id
    return {sid: Case.model_validate({"session_id": sid, **fields})}


def _failing_sessions() -> list[tuple[str, Session, dict[str, Case]]]:
    """(metric that must fail, session, cases): one generated session per fail path."""
    weather = make_tool_call("get_weather", {"city": "Lisbon"}, result={"temp": 21})
    cases: list[tuple[str, Session, dict[str, Case]]] = []

    errored = make_session(
        make_tool_call("get_weather", {"city": "Paris"}, error="upstream timeout"),
        make_turn("answer", text="I could not get the weather."),
    )
    cases.append(("tool_execution", errored, {}))

    empty = make_session(make_tool_call("get_orders", {"id": 1}, result=[]), make_turn(text="."))
    cases.append(("tool_execution", empty, _case(empty, expect_data=True)))

    wrong_tool = make_session(make_tool_call("get_stock", {"ticker": "X"}, result={"p": 1}))
    cases.append(
        (
            "tool_choice",
            wrong_tool,
            _case(wrong_tool, expected_tool_calls=[{"name": "get_weather"}]),
        )
    )

    wrong_args = make_session(weather)
    expected = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    cases.append(("argument_validity", wrong_args, _case(wrong_args, expected_tool_calls=expected)))

    truth = make_session(make_turn("reasoning", text="The user means March 2025."))
    cases.append(("correctness.truthfulness", truth, _case(truth, facts={"period": "2026-03"})))

    incomplete = make_session(weather, make_turn(text="Have a nice trip!"))
    cases.append(
        (
            "correctness.completeness",
            incomplete,
            _case(incomplete, key_points=["the refund total for customer C-1042"]),
        )
    )

    invented = rag_session("You will get a $10 store credit [1].", RETURNS)
    cases.append(("groundedness", invented, _case(invented, type="happy")))
    dangling = rag_session("Items can be returned within 30 days of purchase [7].", RETURNS)
    cases.append(("groundedness", dangling, _case(dangling, type="happy")))
    uncited = rag_session("Items can be returned within 30 days of purchase.", RETURNS)
    cases.append(("groundedness", uncited, _case(uncited, type="happy")))
    bare = rag_session("Items can be returned within 30 days of purchase.")
    cases.append(("groundedness", bare, _case(bare, type="happy", requires_context=True)))

    oos = rag_session(
        "The CEO's salary is $4,200,000 per year [1].", RETURNS, question="What is the CEO paid?"
    )
    cases.append(("refusal", oos, _case(oos, type="oos")))

    repeated = make_session(
        *(make_tool_call("search", {"q": "paris"}, result=[]) for _ in range(6))
    )
    cases.append(("tool_repetition", repeated, {}))
    return cases


FAILING = _failing_sessions()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("metric", "session", "cases"), FAILING, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(FAILING)]
)
def test_a_generated_fail_of_each_metric_quotes_evidence(
    metric: str, session: Session, cases: dict[str, Case]
) -> None:
    report: SessionReport = Evaluator(AemConfig(), cases).evaluate(session)
    results: list[MetricResult] = [m for t in report.turns for m in t.metrics]
    fails = [r for r in results if r.outcome is Outcome.FAIL]
    assert any(r.name == metric for r in fails), [
        (r.name, r.outcome, r.explanation) for r in results
    ]
    assert _unproven([r.model_dump(mode="json") for r in fails]) == []


# Evidence fields that record a doubt, not a proof: a value nothing binds (truthfulness),
# a value or name no tool record holds (groundedness without retrieved passages).
_DOUBT_FIELDS = {"unsupported"}
_RECORD_DOUBT_FIELDS = {"unsupported_value"}


def _doubts_as_proof(report: dict[str, Any]) -> list[str]:
    """Fails that rest only on doubts: every evidence item a doubt (for groundedness in a
    session with no retrieval, a value or name the records lack is a doubt too)."""
    found = []
    for session in report["sessions"]:
        retrieved = any(t["kind"] == "retrieval" for t in session["turns"])
        doubts = _DOUBT_FIELDS | (set() if retrieved else _RECORD_DOUBT_FIELDS)
        for turn in session["turns"]:
            for result in turn["metrics"]:
                fields = {e.get("field") for e in result["evidence"]}
                if result["outcome"] == "fail" and fields and fields <= doubts:
                    found.append(f"{session['session_id']} {turn['turn_id']} {result['name']}")
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_no_fail_on_the_bundled_inputs_rests_on_a_doubt(name: str) -> None:
    assert _doubts_as_proof(json.loads(render(name))) == []


def _doubtful_sessions() -> list[Session]:
    """Sessions whose answers state values no source supports nor contradicts."""
    found = {"flights": [{"id": "SK101", "departs": "11:30"}, {"id": "SK102", "departs": "15:00"}]}
    return [
        make_session(
            make_tool_call("search", {"to": "Oslo"}, result=found),
            make_turn("answer", text="I found 3 options; one leaves at 9:00 for $417."),
        ),
        make_session(
            make_tool_call("get_user", {"id": "U-1"}, result={"name": "Ann", "tier": "gold"}),
            make_turn("answer", text="Ann, as a gold member you saved $1,250 since 2021."),
        ),
        make_session(
            make_turn("reasoning", text="Last quarter was Q1 2026, about 90 days."),
            make_turn("answer", text="Your expenses for Q1 2026 came to 12 400 рублей."),
        ),
    ]


@pytest.mark.parametrize("session", _doubtful_sessions(), ids=["flights", "user", "expenses"])
def test_values_nothing_binds_never_fail_and_make_a_suspect(session: Session) -> None:
    report = Evaluator(AemConfig(), {}).evaluate(session)
    fails = [
        (m.name, m.explanation) for t in report.turns for m in t.metrics if m.outcome == "fail"
    ]
    assert fails == []
    # The answer told the user: it is a suspect (with the plan whose value it repeats).
    assert report.root_causes == [] and report.suspects[-1].kind == "answer"
    strict = Evaluator(AemConfig.model_validate({"verdicts": {"unsupported": "fail"}}), {})
    assert strict.evaluate(session).root_causes, "the strict mode fails what nothing supports"
