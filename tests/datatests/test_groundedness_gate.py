"""The groundedness gate: passed / total over the cases the metric applied to, against
the threshold; judge errors left out of the denominator and reported; the sample run
through ``aem audit --gate`` with its terminal lines, JSON ``gates[]`` and exit code."""

from __future__ import annotations

import json

import jsonschema
import pytest
from rich.console import Console

from aem.foundation.model import (
    AuditReport,
    GateResult,
    MetricResult,
    Outcome,
    SessionReport,
    TurnKind,
    TurnVerdict,
)
from aem.report.gate_view import gate_line, render_gates
from aem.runs.gates import GateError, evaluate_gate, parse_gate
from tests.groundedness_kit import CASES, HELPDESK, helpdesk_report

KNOWN = ["groundedness", "refusal", "tool_execution"]


def _session(sid: str, name: str, outcome: Outcome) -> SessionReport:
    turn = TurnVerdict(
        turn_id="t2",
        span_ids=["s"],
        kind=TurnKind.ANSWER,
        name="chat",
        label="ok",
        metrics=[
            MetricResult(name=name, turn_id="t2", outcome=outcome, explanation=f"{sid} {outcome}")
        ],
    )
    return SessionReport(session_id=sid, turns=[turn])


def _run(outcomes: list[Outcome], name: str = "groundedness") -> AuditReport:
    return AuditReport(sessions=[_session(f"q{i}", name, o) for i, o in enumerate(outcomes)])


def test_eight_questions_one_failure_passes_two_fail() -> None:
    one = evaluate_gate(_run([Outcome.PASS] * 7 + [Outcome.FAIL]), "groundedness", 0.85)
    assert (one.score, one.passed, one.total) == (0.875, True, 8)
    two = evaluate_gate(_run([Outcome.PASS] * 6 + [Outcome.FAIL] * 2), "groundedness", 0.85)
    assert (two.score, two.passed) == (0.75, False)
    assert "0.750 < 0.85 FAILED" in gate_line(two) and "6 of 8 cases passed" in gate_line(two)


def test_judge_errors_and_skips_are_reported_outside_the_denominator() -> None:
    outcomes = [Outcome.PASS] * 6 + [Outcome.ERROR, Outcome.SKIP, Outcome.FAIL]
    gate = evaluate_gate(_run(outcomes), "groundedness", 0.85)
    assert (gate.total, gate.errors, gate.skipped, gate.score) == (7, 1, 1, 6 / 7)
    assert "1 judge error(s) excluded" in gate_line(gate)
    assert [r.verdict for r in gate.rows].count(Outcome.ERROR) == 1


def test_oos_cases_count_through_refusal_and_a_fail_decides_a_case() -> None:
    report = _run([Outcome.PASS, Outcome.PASS])
    report.sessions.append(_session("oos", "refusal", Outcome.FAIL))
    gate = evaluate_gate(report, "groundedness", 0.85)
    assert (gate.cases_failed, gate.total) == (1, 3)
    assert evaluate_gate(report, "refusal", 1.0).total == 1
    assert evaluate_gate(_run([]), "groundedness", 0.85).passed is False  # nothing scored


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("groundedness", "METRIC=THRESHOLD"),
        ("groundedness=x", "not a number"),
        ("groundedness=85", "0..1"),
        ("groundedess=0.85", "no metric named"),
    ],
)
def test_bad_gate_specs(spec: str, error: str) -> None:
    with pytest.raises(GateError, match=error):
        parse_gate(spec, KNOWN)
    assert parse_gate("groundedness=0.85", KNOWN) == ("groundedness", 0.85)


def test_sample_run_gate_rows() -> None:
    from aem.cases import load_cases

    gate = evaluate_gate(helpdesk_report(), "groundedness", 0.85, load_cases(CASES))
    verdicts = {r.session_id: (r.type, r.metric, r.verdict.value) for r in gate.rows}
    assert verdicts == {
        "rag-cited": ("happy", "groundedness", "pass"),
        "rag-invented": ("happy", "groundedness", "fail"),
        "rag-no-citation": ("happy", "groundedness", "fail"),
        "rag-dangling": ("edge", "groundedness", "fail"),
        "oos-honest": ("oos", "refusal", "pass"),
        "oos-invented": ("oos", "refusal", "fail"),
        "rag-russian": ("happy", "groundedness", "pass"),
    }
    assert gate.score == pytest.approx(3 / 7) and not gate.passed
    console = Console(record=True, width=200)
    render_gates([gate], console)
    text = console.export_text()
    assert "gate groundedness: 0.429 < 0.85 FAILED" in text and "dangling citation [4]" in text


def test_audit_cli_gate_exit_codes_and_json() -> None:
    from typer.testing import CliRunner

    from aem.cli import app

    base = ["audit", str(HELPDESK), "--cases", str(CASES), "--no-progress"]
    failed = CliRunner().invoke(app, [*base, "--gate", "groundedness=0.85"])
    assert failed.exit_code == 1, failed.output
    assert "gate groundedness: 0.429 < 0.85 FAILED" in failed.stdout
    passed = CliRunner().invoke(app, [*base, "--gate", "groundedness=0.4", "--json"])
    assert passed.exit_code == 0, passed.output
    gates = json.loads(passed.stdout)["gates"]
    assert [(g["metric"], g["threshold"], g["passed"]) for g in gates] == [
        ("groundedness", 0.4, True)
    ]
    assert {r["session_id"] for r in gates[0]["rows"]} >= {"rag-cited", "oos-honest"}
    GateResult.model_validate(gates[0])
    schema = json.loads((CASES.parent.parent / "docs" / "report.schema.json").read_text())
    assert "gates" in schema["properties"] and "GateRow" in schema["$defs"]
    jsonschema.validate(json.loads(passed.stdout), schema)
    bad = CliRunner().invoke(app, [*base, "--gate", "groundednes=0.85"])
    assert bad.exit_code == 2 and "no metric named" in bad.output
