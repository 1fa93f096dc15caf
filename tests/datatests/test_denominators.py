"""Nothing unmeasured disappears: every rate states what it is over — pass, fail,
unverified, skipped (with why), error — a session the metric gave no result is counted,
an unscorable item is never a fail, and ``--gate-unmeasured`` refuses a run whose
verdict rests on too few scored sessions.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.denominator import Denominator
from aem.foundation.model import (
    AuditReport,
    Label,
    MetricResult,
    Outcome,
    SessionReport,
    TurnKind,
    TurnVerdict,
)
from aem.report.gate_view import gate_line
from aem.runs.gates import evaluate_gate

P, F, U, S, E = Outcome.PASS, Outcome.FAIL, Outcome.UNVERIFIED, Outcome.SKIP, Outcome.ERROR


def _session(sid: str, outcome: Outcome | None, why: str = "") -> SessionReport:
    metrics = (
        []
        if outcome is None
        else [MetricResult(name="groundedness", turn_id="t1", outcome=outcome, explanation=why)]
    )
    turn = TurnVerdict(
        turn_id="t1", span_ids=["s"], kind=TurnKind.ANSWER, name="a", label=Label.OK,
        metrics=metrics,
    )  # fmt: skip
    return SessionReport(session_id=sid, turns=[turn])


def _report(*items: tuple[Outcome | None, str]) -> AuditReport:
    return AuditReport(sessions=[_session(f"s{i}", o, w) for i, (o, w) in enumerate(items)])


def test_an_unscorable_item_is_never_a_fail_and_every_kind_is_counted() -> None:
    d = Denominator.of(["pass", "pass", "fail", "unverified", "error", "skip", "skip"],
                       ["no answer", "no answer"])  # fmt: skip
    assert (d.passed, d.failed, d.decided, d.unmeasured, d.total) == (2, 1, 3, 4, 7)
    assert d.rate == 2 / 3
    assert d.describe() == (
        "2 of 3 passed; not measured: 1 unverified, 2 skipped (no answer), 1 error — 57% of 7"
    )


def test_a_session_with_no_result_is_counted_not_dropped_and_skips_say_why() -> None:
    report = _report(
        (P, ""), (P, ""), (F, ""), (S, "no retrieved passage"), (U, ""), (None, ""), (None, "")
    )
    gate = evaluate_gate(report, "groundedness", 0.5)
    assert (gate.total, gate.cases_passed, gate.cases_failed) == (3, 2, 1)
    assert (gate.not_scored, gate.skipped, gate.unverified) == (2, 1, 1)
    assert gate.skip_reasons == {"no retrieved passage": 1}
    assert gate.unmeasured_share == 4 / 7
    line = gate_line(gate)
    assert "1 skipped: 1 no retrieved passage" in line
    assert "2 session(s) with no groundedness result" in line
    assert "unmeasured 57%" in line
    assert gate.passed  # 2/3 >= 0.5 and no limit on the unmeasured


def test_a_gate_on_the_unmeasured_share_fails_a_run_scored_on_too_little() -> None:
    report = _report((P, ""), (E, "judge timed out"), (U, ""), (None, ""))
    assert not evaluate_gate(report, "groundedness", 0.5, max_unmeasured=0.1).passed
    assert "unmeasured 75% > 0.1 allowed" in gate_line(
        evaluate_gate(report, "groundedness", 0.5, max_unmeasured=0.1)
    )
    assert evaluate_gate(report, "groundedness", 0.5, max_unmeasured=0.8).passed


def _audit(tmp_path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = tmp_path / "r.json"
    args = ["audit", "sample_traces", "--cases", "sample_traces/cases.jsonl", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--no-progress", *extra])
    return result.exit_code, json.loads(out.read_text())


def test_cli_gate_unmeasured_sets_the_exit_code(tmp_path: Path) -> None:
    """On the bundled samples few sessions are out-of-scope questions: a refusal gate is
    decided on few of them. Allowing every session unmeasured passes; allowing none fails."""
    code, report = _audit(tmp_path, "--gate", "refusal=0", "--gate-unmeasured", "1")
    (gate,) = report["gates"]  # type: ignore[misc]
    assert code == 0 and gate["unmeasured_share"] > 0 and gate["not_scored"] > 0
    code, report = _audit(tmp_path, "--gate", "refusal=0", "--gate-unmeasured", "0")
    (gate,) = report["gates"]  # type: ignore[misc]
    assert code == 1 and gate["passed"] is False and gate["max_unmeasured"] == 0
