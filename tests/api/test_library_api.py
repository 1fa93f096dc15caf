"""Using AEM as a library: assemble a session, evaluate it, read the three layers."""

from __future__ import annotations

from pathlib import Path

import aem
from aem.foundation.model import Label
from collectors.assembler import SessionAssembler
from collectors.readers import read_batches
from tests.conftest import SAMPLES


def test_evaluate_session_returns_the_three_layers() -> None:
    assembler = SessionAssembler(idle=10**9)
    for clock, span in enumerate(
        s for b in read_batches(str(SAMPLES / "parallel_tools.otlp.jsonl")) for s in b.spans
    ):
        assembler.add(span, clock)
    [session] = assembler.drain()
    report = aem.evaluate_session(session)  # no case: only case-free metrics decide
    layers = {
        t.name: (t.label, [m.name for m in t.metrics if m.outcome == "fail"]) for t in report.turns
    }
    assert layers["get_hotels"] == (Label.ROOT_CAUSE, ["tool_execution"])
    assert [c.name for c in report.root_causes] == ["get_hotels"]
    assert report.turns[-1].label is Label.OK  # its own metrics pass: nothing to inherit


def test_audit_paths_and_cases(tmp_path: Path) -> None:
    cases = aem.load_cases(SAMPLES / "cases.jsonl")
    report = aem.audit_paths([str(SAMPLES / "march_refunds.otlp.jsonl")], cases=cases)
    [refunds] = report.sessions
    assert refunds.case_found and refunds.root_causes[0].turn_id == "t1"
    assert report.ranking[0].sessions == 1 and report.ranking[0].share == 1.0
