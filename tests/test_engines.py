"""``aem audit --workers N``: the report is byte-identical to ``--workers 1``.

Why through the CLI: that is where the default (one worker per core) and the option
meet the reader, the pool and the report writer; a difference of one byte anywhere —
a session order, an issue's place, an embedding computed in another batch — fails here.
The inputs are the golden ones (sample traces, real instrumented traces, a tau-bench
slice), compared with the single-process run of the same working tree, not with files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aem.audit import AuditProgress, Outcomes
from aem.engines.compact import dumps, loads, pack_sessions, unpack_sessions
from aem.engines.seam import InProcessEngine
from aem.model import (
    ClosedSession,
    InputIssue,
    MetricResult,
    SessionReport,
    SourceRef,
    SpanEvent,
    SpanRecord,
)
from scripts.golden_reports import INPUTS, REPO
from tests.engines_kit import assert_same, audit_json


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_two_workers_report_equals_one(name: str) -> None:
    single = audit_json(name, "--workers", "1")
    assert_same(single, audit_json(name, "--workers", "2"), f"--workers 2 report on {name}")


def _span(number: int, **extra: object) -> SpanRecord:
    return SpanRecord(
        "a" * 32,
        f"{number:016x}",
        None if number == 0 else f"{0:016x}",
        f"span {number}",
        kind=1,
        start_unix_nano=number,
        end_unix_nano=number + 5,
        status_code=2,
        status_message="boom",
        attributes={"session.id": "s1", "n": [1, {"x": 2.5}]},
        events=[SpanEvent("exception", 3, {"exception.message": "x"})],
        resource={"service.name": "svc"},
        links=[("b" * 32, "c" * 16)],
        scope="scope",
        origin=SourceRef("file.jsonl", number + 1),
        **extra,  # type: ignore[arg-type]
    )


def test_compact_form_round_trips_every_field() -> None:
    sessions = [
        ClosedSession("s1", "session.id", False, [_span(0), _span(1)]),
        ClosedSession(
            "t",
            "trace_id",
            True,
            [],
            cut=True,
            issues=[InputIssue(kind="session_cut", message="m")],
        ),
    ]
    assert unpack_sessions(pack_sessions(sessions)) == sessions


def test_reports_cross_the_pipe_unchanged() -> None:
    """Reports come back from workers pickled as (class, fields, fields set): equal, the
    same JSON, the same fields marked as set, without running validation again."""
    from aem.audit import audit_paths

    reports = audit_paths([str(REPO / "sample_traces")], workers=1).sessions
    back = loads(dumps(reports))
    assert back == reports
    assert [r.model_dump_json() for r in back] == [r.model_dump_json() for r in reports]
    assert [r.model_dump_json(exclude_unset=True) for r in back] == [
        r.model_dump_json(exclude_unset=True) for r in reports
    ]
    results = [m for report in back for turn in report.turns for m in turn.metrics]
    assert results and all(type(m) is MetricResult for m in results)


def test_evaluation_errors_land_where_one_process_puts_them() -> None:
    """Outcomes delivered late (from workers) are placed among the issues at the position
    recorded when their session was submitted, as if appended then."""
    issues = [InputIssue(kind="a", message="1")]
    outcomes = Outcomes(issues, AuditProgress())
    first = outcomes.position()
    issues.append(InputIssue(kind="b", message="2"))
    second = outcomes.position()
    issues.append(InputIssue(kind="c", message="3"))
    outcomes.add(InputIssue(kind="evaluation_error", message="x"), first)
    outcomes.add(SessionReport(session_id="s", session_key="k", session_key_fallback=False), first)
    outcomes.add(InputIssue(kind="evaluation_error", message="y"), second)
    assert [i.message for i in issues] == ["1", "x", "2", "y", "3"]
    assert [r.session_id for r in outcomes.reports] == ["s"]


def test_in_process_engine_delivers_at_once() -> None:
    class Failing:
        def evaluate(self, session: ClosedSession) -> SessionReport:
            raise RuntimeError("no")

    got: list[tuple[object, int]] = []
    engine = InProcessEngine(Failing(), lambda outcome, at: got.append((outcome, at)))  # type: ignore[arg-type]
    engine.submit([ClosedSession("s", "k", False, [_span(0)])], 7)
    ((issue, at),) = got
    assert at == 7 and isinstance(issue, InputIssue) and issue.kind == "evaluation_error"
    assert issue.source == "file.jsonl" and Path(issue.source).suffix == ".jsonl"
