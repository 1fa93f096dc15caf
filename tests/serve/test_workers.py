"""Evaluation in worker processes (``serve.workers``) and evaluation paused
(``serve.spool_only``): verdicts equal ``aem audit``'s, a killed worker loses no session,
and spans acknowledged while evaluation is paused are evaluated after a kill -9 and a
restart without the pause."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from tests.serve.conftest import send, wait_for
from tests.serve.expected import (
    CASES,
    assert_same_verdicts,
    delivered_verdicts,
    expected_verdicts,
    sample_files,
    sessions_in,
)

pytestmark = pytest.mark.slow


def _descendants(pid: int) -> dict[int, int]:
    """``{pid: depth}`` of every live descendant of ``pid`` (1 = child, 2 = grandchild)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parent[int(entry.name)] = int(line.split()[1])
    out: dict[int, int] = {}
    for child in parent:
        depth, p = 1, parent[child]
        while p > 1 and p != pid and depth < 10:
            depth, p = depth + 1, parent.get(p, 0)
        if p == pid:
            out[child] = depth
    return out


def _done(spool: Path) -> int:
    with sqlite3.connect(spool) as conn:
        return int(conn.execute("SELECT count(*) FROM done_sessions").fetchone()[0])


def _spooled(spool: Path) -> int:
    """Spans on disk: decoded rows, plus those of requests spooled raw while paused."""
    with sqlite3.connect(spool) as conn:
        return int(
            conn.execute(
                "SELECT (SELECT count(*) FROM spans) "
                "+ (SELECT coalesce(sum(spans), 0) FROM requests)"
            ).fetchone()[0]
        )


def test_a_killed_worker_loses_nothing_and_verdicts_equal_audit(serve_factory) -> None:
    serve = serve_factory("serve", "--cases", str(CASES), "--workers", "1")
    files = sample_files()
    first, second = files[:3], files[3:]
    assert send("grpc", serve.grpc, first)["failed"] == 0
    wait_for(lambda: _done(serve.spool) == sessions_in(first), timeout=300, what="first half")
    # The pool's workers are the server's children, forked from it at start with its
    # evaluator built; no forkserver runs.
    family = _descendants(serve.proc.pid)
    workers = [pid for pid, depth in family.items() if depth == 1]
    assert workers and 2 not in family.values(), family
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    assert send("http", f"{serve.http}/v1/traces", second)["failed"] == 0
    expected = expected_verdicts(files)
    wait_for(lambda: _done(serve.spool) == sessions_in(files), timeout=300, what="all evaluated")
    wait_for(lambda: len(serve.verdicts()) >= len(expected), timeout=60, what="verdicts")
    assert "an evaluation worker died; pool restarted" in serve.log()
    # The server runs threads now: the new pool's workers come from a forkserver.
    assert 2 in _descendants(serve.proc.pid).values()
    with sqlite3.connect(serve.spool) as conn:
        assert conn.execute("SELECT count(*) FROM dead_letter").fetchone()[0] == 0
    helpers = list(_descendants(serve.proc.pid))  # the new workers, the forkserver
    assert serve.stop() == 0
    assert_same_verdicts(delivered_verdicts(serve.verdicts()), expected)
    wait_for(lambda: not any(map(_alive, helpers)), timeout=30, what="the workers gone")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_spool_only_acknowledged_spans_survive_kill_9_and_are_evaluated(serve_factory) -> None:
    files = sample_files()
    paused = serve_factory("paused", "--cases", str(CASES), "--spool-only", "true")
    assert send("grpc", paused.grpc, files[::2])["failed"] == 0
    assert send("http", f"{paused.http}/v1/traces", files[1::2])["failed"] == 0
    spooled = _spooled(paused.spool)
    paused.kill9()  # right after the acknowledgements
    assert spooled == sum(1 for f in files for line in f.read_text().splitlines() if line)
    assert _done(paused.spool) == 0  # nothing evaluated while paused
    again = serve_factory("again", "--cases", str(CASES), reuse_spool=paused.spool)
    expected = expected_verdicts(files)
    wait_for(lambda: _done(again.spool) == sessions_in(files), timeout=300, what="evaluated")
    wait_for(lambda: len(again.verdicts()) >= len(expected), timeout=60, what="verdicts")
    assert again.stop() == 0
    assert_same_verdicts(delivered_verdicts(again.verdicts()), expected)
    assert _spooled(again.spool) == 0


def test_kill_9_of_the_server_leaves_no_worker_behind(serve_factory) -> None:
    serve = serve_factory("serve", "--workers", "1")
    # The worker is forked at start, before any span arrives.
    family = wait_for(
        lambda: (d := _descendants(serve.proc.pid)) and d,
        timeout=120,
        what="the evaluation worker started",
    )
    serve.kill9()
    wait_for(lambda: not any(map(_alive, family)), timeout=30, what="workers and forkserver gone")
