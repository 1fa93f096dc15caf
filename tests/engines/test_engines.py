"""``aem audit --workers N``: the report is byte-identical to ``--workers 1``.

Why through the CLI: that is where the default (one worker per core) and the option
meet the reader, the pool and the report writer; a difference of one byte anywhere —
a session order, an issue's place, an embedding computed in another batch — fails here.
The inputs are the golden ones (sample traces, real instrumented traces, a tau-bench
slice), compared with the single-process run of the same working tree, not with files.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from aem.audit import AuditProgress, Outcomes, audit_paths
from aem.engines.compact import dumps, loads, pack_sessions, unpack_sessions
from aem.engines.seam import DeferredEngine, InProcessEngine
from aem.foundation.model import (
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


class _Recording:
    """An engine that notes what it was given (and, here, takes ``cost`` seconds a session)."""

    def __init__(self, cost: float = 0.0) -> None:
        self.cost = cost
        self.got: list[tuple[list[str], int]] = []
        self.finished = self.closed = False

    def submit(self, sessions: list[ClosedSession], position: int) -> None:
        time.sleep(self.cost * len(sessions))
        self.got.append(([s.session_id for s in sessions], position))

    def finish(self) -> None:
        self.finished = True

    def close(self) -> None:
        self.closed = True


def _sessions(*names: str) -> list[ClosedSession]:
    return [ClosedSession(n, n, False, [_span(0)]) for n in names]


def test_deferred_engine_starts_no_pool_for_a_short_audit() -> None:
    here, started = _Recording(), []

    def start_pool() -> _Recording:
        started.append(1)
        return _Recording()

    engine = DeferredEngine(here, start_pool, 5.0)
    engine.submit(_sessions("a", "b"), 0)
    engine.finish()
    engine.close()
    assert here.got == [(["a"], 0), (["b"], 0)] and not started
    assert here.closed


def test_deferred_engine_hands_the_rest_of_a_group_to_the_pool_once_over_budget() -> None:
    """A reader's last group can hold every session: the switch happens inside it, the
    sessions keep their order and their group's issue position."""
    here, pool = _Recording(cost=0.02), _Recording()
    engine = DeferredEngine(here, lambda: pool, 0.03)
    engine.submit(_sessions("a", "b", "c", "d"), 3)
    engine.submit(_sessions("e"), 4)
    engine.finish()
    engine.close()
    assert here.got == [(["a"], 3), (["b"], 3)]
    assert pool.got == [(["c", "d"], 3), (["e"], 4)]
    assert pool.finished and pool.closed and here.closed


def test_deferred_engine_asks_again_whether_a_pool_is_worth_it() -> None:
    """Over budget but told little work is left, it stays here and asks again only after
    another budget of evaluation; once told yes, the rest goes to the pool."""
    here, pool, asked = _Recording(cost=0.02), _Recording(), []

    def worth(last: ClosedSession, spent: float) -> bool:
        asked.append(last.session_id)
        return len(asked) > 1

    engine = DeferredEngine(here, lambda: pool, 0.03, worth)
    engine.submit(_sessions("a", "b", "c", "d", "e", "f", "g"), 0)
    engine.finish()
    assert asked == ["b", "d"]
    assert here.got == [([n], 0) for n in "abcd"]
    assert pool.got == [(["e", "f", "g"], 0)]


def _at(session_id: str, source: str | None, line: int = 0) -> ClosedSession:
    span = _span(0)
    span.origin = SourceRef(source, line) if source is not None else None
    return ClosedSession(session_id, session_id, False, [span])


def test_remaining_work_reads_the_share_of_the_input_from_where_a_session_was_read(
    tmp_path: Path,
) -> None:
    from aem.engines.remaining import RemainingWork

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("x" * 99 + "\n")  # 100 bytes, one line
    second.write_text("".join("y" * 29 + "\n" for _ in range(10)))  # 300 bytes, 10 lines
    remaining = RemainingWork([str(first), str(second)], min_seconds=10.0)
    share = remaining.share_read(_at("s", str(second), 5))
    assert share == pytest.approx((100 + 300 * 5 / 11) / 400)
    # ~59 % read: 1 s spent leaves ~0.7 s, no pool; 20 s spent leaves ~14 s, a pool.
    assert not remaining.worth_pool(_at("s", str(second), 5), 1.0)
    assert remaining.worth_pool(_at("s", str(second), 5), 20.0)
    # Where it cannot tell (stdin, a span without a source): as before, a pool.
    assert RemainingWork(["-"], 10.0).worth_pool(_at("s", "-", 3), 0.1)
    assert remaining.worth_pool(_at("u", None), 0.1)


@pytest.mark.slow
@pytest.mark.parametrize("here_seconds", [0.0, 0.05])
def test_default_workers_report_equals_one_whenever_the_pool_starts(
    here_seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Left to AEM, the pool starts after ``HERE_SECONDS`` of evaluation here: from the
    first session (0) or part-way (0.05 s, the samples take longer): the report is the
    single process's, byte for byte."""
    import multiprocessing

    import aem.audit
    from aem.engines.pool import shutdown_pool

    single = audit_paths([str(REPO / "sample_traces")], workers=1).model_dump_json()
    shutdown_pool()
    assert not multiprocessing.active_children()
    monkeypatch.setattr(aem.audit, "HERE_SECONDS", here_seconds)
    monkeypatch.setattr(aem.audit, "POOL_MIN_SECONDS", 0.0)
    deferred = audit_paths([str(REPO / "sample_traces")], workers=None).model_dump_json()
    assert multiprocessing.active_children(), "the pool never started"
    shutdown_pool()
    assert_same(single, deferred, f"default workers, pool after {here_seconds} s")


@pytest.mark.slow
def test_default_workers_are_forked_from_the_audit_and_report_as_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool the default starts forks its workers from the auditing process (which
    has already loaded AEM and the encoder), and the report is still the single
    process's, byte for byte, embeddings included."""
    import aem.audit
    from aem.engines import pool

    pool.shutdown_pool()
    paths = [str(REPO / "sample_traces")]
    single = audit_paths(paths, workers=1).model_dump_json()
    monkeypatch.setattr(aem.audit, "HERE_SECONDS", 0.05)
    monkeypatch.setattr(aem.audit, "POOL_MIN_SECONDS", 0.0)
    deferred = audit_paths(paths, workers=None).model_dump_json()
    assert pool._POOL is not None and pool._POOL[0][2] == "fork"
    pool.shutdown_pool()
    assert_same(single, deferred, "default workers forked after load")


def test_default_workers_start_no_pool_when_little_work_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past ``HERE_SECONDS``, the pool starts only if the input still left is estimated
    to take ``POOL_MIN_SECONDS``: the samples are a few seconds of work at most."""
    import multiprocessing

    import aem.audit
    from aem.engines.pool import shutdown_pool

    shutdown_pool()
    monkeypatch.setattr(aem.audit, "HERE_SECONDS", 1e-6)  # asked after the first session
    monkeypatch.setattr(aem.audit, "POOL_MIN_SECONDS", 3600.0)
    report = audit_paths([str(REPO / "sample_traces")], workers=None)
    assert len(report.sessions) > 5
    assert not multiprocessing.active_children()


def test_a_short_audit_with_default_workers_starts_no_process(tmp_path: Path) -> None:
    """The point of waiting: one session is evaluated here, before a pool could be up."""
    import multiprocessing

    from aem.engines.pool import shutdown_pool

    shutdown_pool()
    one = tmp_path / "one.otlp.jsonl"
    lines = (REPO / "sample_traces" / "helpdesk_rag.otlp.jsonl").read_text().splitlines()
    one.write_text("\n".join(lines[:3]) + "\n")
    report = audit_paths([str(one)], workers=None)
    assert len(report.sessions) == 1
    assert not multiprocessing.active_children()
