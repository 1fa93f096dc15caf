"""``aem serve``'s line per turn (no sink configured) explains itself as ``aem audit``
does: a failed turn carries its first failure's one-line reason, and a turn no metric
checked says "not checked" instead of reading as a plain ``ok``."""

from __future__ import annotations

import io
import json

import aem
from aem.sinks.records import verdict_items
from aem.sinks.stdout import StdoutSink


def _lines() -> list[dict[str, object]]:
    report = aem.audit_paths("sample_traces/", cases="sample_traces/cases.jsonl")
    stream = io.StringIO()
    sink = StdoutSink(stream)
    for session in report.sessions:
        sink.deliver(verdict_items(session, completed_at=0.0))
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_root_cause_line_carries_the_reason_the_audit_prints() -> None:
    lines = _lines()
    root = next(
        line for line in lines
        if line["session_id"] == "refunds-march" and line["verdict"] == "root_cause"
    )  # fmt: skip
    assert str(root["explanation"]).startswith("correctness.truthfulness: states 'March 2025'")


def test_a_turn_no_metric_checked_says_not_checked() -> None:
    lines = _lines()
    retrieval = [
        line for line in lines
        if line["session_id"] == "rag-dangling" and line["turn_id"] == "t1"
    ]  # fmt: skip
    assert retrieval and retrieval[0]["verdict"] == "ok"
    assert str(retrieval[0]["explanation"]).startswith("not checked (")
