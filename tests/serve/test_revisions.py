"""A conversation that comes back after its verdict: its new traces are evaluated as a
revision of the session, through the real server (real exporter, real spool, JSONL sink).

What must hold: the second verdict reaches the sink as ``revision: 1`` with keys of its
own (the first keeps ``revision: 0`` and its keys), also when the server restarted between
the two (only the spool remembers the first); spans of traces already evaluated (re-sent)
are still late, never a revision. The spool's own rules — a file written before revisions
existed is migrated when opened, a duplicate commits nothing, a failing revision is
dead-lettered without losing the earlier failure — are checked on a real SQLite file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from aem.serve.spool import Spool
from aem.sinks.records import KEY_SEPARATOR, OutboxItem, item_key
from tests.serve.conftest import metric, send, wait_for
from tests.serve.expected import SAMPLES

SESSION = "weather-genai"
FIRST_RUN = SAMPLES / "weather_genai.otlp.jsonl"


def _spans(path: Path) -> int:
    return sum(
        len(scope["spans"])
        for line in path.read_text().splitlines()
        if line.strip()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
    )


def _new_run(tmp_path: Path, tag: str) -> Path:
    """The first run again as a new run of the same conversation: fresh trace and span
    ids (the first hex digits replaced by ``tag``), the same ``gen_ai.conversation.id``."""
    lines = []
    for line in FIRST_RUN.read_text().splitlines():
        if not line.strip():
            continue
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for field in ("traceId", "spanId", "parentSpanId"):
                        if span.get(field):
                            span[field] = tag + span[field][len(tag) :]
        lines.append(json.dumps(document))
    path = tmp_path / f"run_{tag}.otlp.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _trace_ids(path: Path) -> set[str]:
    return {
        span["traceId"]
        for line in path.read_text().splitlines()
        if line.strip()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    }


def _by_revision(lines: list[dict]) -> dict[int, list[dict]]:
    by_revision: dict[int, list[dict]] = {}
    for line in lines:
        if line["session_id"] == SESSION:
            by_revision.setdefault(line["revision"], []).append(line)
    return by_revision


def _delivered(serve, evaluated: int) -> bool:
    """Whether ``evaluated`` sessions were committed and every verdict delivered."""
    with sqlite3.connect(serve.spool) as conn:
        pending = conn.execute("SELECT count(*) FROM outbox WHERE delivered_at IS NULL").fetchone()[
            0
        ]
    return not pending and metric(serve.http, "aem_sessions_evaluated_total") == evaluated


def _assert_revision_1(lines: dict[int, list[dict]], second_run: Path) -> None:
    first, second = lines[0], lines[1]
    assert first and len(second) == len(first)  # the same run again: as many verdicts
    first_keys, second_keys = {x["key"] for x in first}, {x["key"] for x in second}
    assert len(second_keys) == len(second) and not first_keys & second_keys
    assert all(key.endswith(f"{KEY_SEPARATOR}r1") for key in second_keys)
    # The same run, so the same turns and metrics: only the revision tells the keys apart.
    assert {k.removesuffix(f"{KEY_SEPARATOR}r1") for k in second_keys} == first_keys
    assert {x["revision"] for x in first} == {0} and {x["revision"] for x in second} == {1}
    # The revision judged the new run's spans only; the first verdict the first run's.
    on_trace = {x["trace_id"] for x in second if x.get("trace_id")}
    assert on_trace and on_trace <= _trace_ids(second_run)
    assert not {x["trace_id"] for x in first if x.get("trace_id")} & _trace_ids(second_run)


def _done_row(spool: Path) -> tuple[int, int, int]:
    with sqlite3.connect(spool) as conn:
        return conn.execute(
            "SELECT spans, cut, revisions FROM done_sessions WHERE session_id = ?", (SESSION,)
        ).fetchone()


@pytest.mark.slow
def _send_and_see_late(serve, run, what: str) -> None:
    """Send ``run`` and wait until every span of it is counted late."""
    assert send("grpc", serve.grpc, [run])["failed"] == 0
    wait_for(
        lambda: metric(serve.http, "aem_late_spans_total") == _spans(run), timeout=60, what=what
    )


def test_a_returning_conversation_is_evaluated_as_revision_1(serve_factory, tmp_path) -> None:
    serve = serve_factory("serve")
    assert send("grpc", serve.grpc, [FIRST_RUN])["failed"] == 0
    wait_for(lambda: _delivered(serve, 1), timeout=180, what="the first verdict")

    second_run = _new_run(tmp_path, "ffff")
    assert send("http", f"{serve.http}/v1/traces", [second_run])["failed"] == 0
    wait_for(lambda: _delivered(serve, 2), timeout=120, what="the revision's verdict")
    lines = _by_revision(serve.verdicts())
    assert sorted(lines) == [0, 1]
    _assert_revision_1(lines, second_run)
    assert metric(serve.http, "aem_sessions_revised_total") == 1
    assert metric(serve.http, "aem_late_spans_total") == 0
    assert _done_row(serve.spool) == (_spans(FIRST_RUN) + _spans(second_run), 0, 1)

    # The second run re-sent as it was: its traces were evaluated, so it is late.
    verdict_lines = len(serve.verdicts())
    _send_and_see_late(serve, second_run, "re-sent spans counted as late")
    assert serve.stop() == 0
    assert len(serve.verdicts()) == verdict_lines
    assert _done_row(serve.spool)[2] == 1
    log = [json.loads(x) for x in serve.log_path.read_text().splitlines() if x.startswith("{")]
    assert [x["revision"] for x in log if x.get("msg", "").startswith("session evaluated")] == [
        0,
        1,
    ]


@pytest.mark.slow
def test_a_conversation_returning_after_a_restart_is_revision_1(serve_factory, tmp_path) -> None:
    serve = serve_factory("serve")
    assert send("grpc", serve.grpc, [FIRST_RUN])["failed"] == 0
    wait_for(lambda: _delivered(serve, 1), timeout=180, what="the first verdict")
    assert serve.stop() == 0

    # Only the spool remembers the session now.
    again = serve_factory("again", reuse_spool=serve.spool)
    second_run = _new_run(tmp_path, "eeee")
    assert send("grpc", again.grpc, [second_run])["failed"] == 0
    wait_for(lambda: _delivered(again, 1), timeout=180, what="the revision's verdict")
    lines = _by_revision(serve.verdicts() + again.verdicts())
    assert sorted(lines) == [0, 1] and not _by_revision(again.verdicts()).get(0)
    _assert_revision_1(lines, second_run)
    assert metric(again.http, "aem_sessions_revised_total") == 1
    assert _done_row(again.spool) == (_spans(FIRST_RUN) + _spans(second_run), 0, 1)

    # The first run re-sent: its traces are marked done in the spool, so it is late.
    _send_and_see_late(again, FIRST_RUN, "re-sent spans counted as late")
    assert metric(again.http, "aem_sessions_evaluated_total") == 1  # the revision only
    assert again.stop() == 0
    with sqlite3.connect(again.spool) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0


@pytest.mark.slow
def test_a_conversation_cut_stays_closed_also_after_a_restart(serve_factory, tmp_path) -> None:
    # Cut at 2 spans: what follows is the same run past its limit, never a revision.
    serve = serve_factory("serve", "--set", "assembly.max_session_spans=2")
    assert send("grpc", serve.grpc, [FIRST_RUN])["failed"] == 0
    wait_for(lambda: _delivered(serve, 1), timeout=180, what="the cut verdict")
    assert _done_row(serve.spool)[1:] == (1, 0)
    live = _new_run(tmp_path, "dddd")
    _send_and_see_late(serve, live, "spans after the cut counted as late")
    assert serve.stop() == 0

    # Restarted without the limit: only the spool's mark says the session was cut.
    again = serve_factory("again", reuse_spool=serve.spool)
    after_restart = _new_run(tmp_path, "cccc")
    _send_and_see_late(
        again, after_restart, "spans after the cut counted as late after the restart"
    )
    assert metric(again.http, "aem_sessions_evaluated_total") == 0
    assert again.stop() == 0
    assert again.verdicts() == [] and _done_row(again.spool)[1:] == (1, 0)
    with sqlite3.connect(again.spool) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0


# ---- the spool's rules, on a real file ----------------------------------------------

# done_sessions as spools were created before revisions existed.
OLD_DONE_SESSIONS = """
CREATE TABLE done_sessions (
    session_id TEXT PRIMARY KEY,
    evaluated_at REAL NOT NULL,
    spans INTEGER NOT NULL,
    cut INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE done_traces (
    trace_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO done_sessions VALUES ('s', 1.0, 3, 0);
INSERT INTO done_traces VALUES ('t-old', 's');
"""


def _items(session_id: str) -> list[OutboxItem]:
    return [
        OutboxItem(item_key(session_id, "t1", "m"), "metric", {"revision": 0}),
        OutboxItem(item_key(session_id, "t1", "aem.label"), "turn", {"revision": 0}),
    ]


def _outbox(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT key, payload FROM outbox WHERE sink = 'jsonl'").fetchall()
    return {key: json.loads(payload)["revision"] for key, payload in rows}


def test_a_spool_written_before_revisions_is_migrated_and_numbers_the_next_one(
    tmp_path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_DONE_SESSIONS)
    spool = Spool(path, sinks=["jsonl"])
    try:
        assert spool.earlier_evaluation("s", ["t-new"]) is not None  # the old row is read
        assert spool.commit_session("s", ["t-new"], _items("s"), spans=2, cut=False) == 1
        assert spool.commit_session("s", ["t-old"], _items("s"), spans=2, cut=False) is None
    finally:
        spool.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT spans, cut, revisions FROM done_sessions").fetchall() == [
            (5, 0, 1)
        ]
    r1 = f"{KEY_SEPARATOR}r1"
    assert _outbox(path) == {item.key + r1: 1 for item in _items("s")}
    Spool(path, sinks=["jsonl"]).close()  # opened again: already migrated, nothing to do


def test_spool_numbers_revisions_and_refuses_duplicates(tmp_path) -> None:
    path = tmp_path / "spool.sqlite"
    spool = Spool(path, sinks=["jsonl"])
    try:
        assert spool.earlier_evaluation("s", ["a"]) is None
        assert spool.commit_session("s", ["a"], _items("s"), spans=1, cut=False) == 0
        # The same trace again (evaluated twice by a race): a duplicate, nothing changes.
        assert spool.commit_session("s", ["a", "b"], _items("s"), spans=2, cut=False) is None
        assert spool.commit_session("s", ["b"], _items("s"), spans=1, cut=True) == 1
        earlier = spool.earlier_evaluation("s", ["a", "c"])
        assert earlier is not None and earlier.cut and earlier.done_traces == {"a"}
        assert spool.counts()["done_sessions"] == 1 and spool.counts()["done_traces"] == 2
    finally:
        spool.close()
    outbox = _outbox(path)
    assert sorted(outbox.values()) == [0, 0, 1, 1] and len(outbox) == 4


def test_a_failing_revision_is_dead_lettered_beside_the_earlier_failure(tmp_path) -> None:
    path = tmp_path / "spool.sqlite"
    spool = Spool(path, sinks=["jsonl"])
    try:
        assert spool.dead_letter("s", ["a"], spans=1, error="first failure")
        assert spool.commit_session("s", ["b"], _items("s"), spans=1, cut=False) == 1
        assert spool.dead_letter("s", ["c"], spans=2, error="second failure")
        assert not spool.dead_letter("s", ["c"], spans=2, error="again")  # already done
        assert spool.dead_letters == 1
        assert spool.commit_session("s", ["d"], _items("s"), spans=1, cut=False) == 3
    finally:
        spool.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT spans, error FROM dead_letter").fetchall() == [
            (3, "first failure\nsecond failure")
        ]
        assert conn.execute("SELECT count(*) FROM done_traces").fetchone()[0] == 4
        assert conn.execute("SELECT revisions FROM done_sessions").fetchall() == [(3,)]


def _commit(path: Path, trace: str) -> int | None:
    """One evaluation of session ``s`` (trace ``trace``) through a freshly opened spool,
    as after a restart."""
    spool = Spool(path, sinks=["jsonl"])
    try:
        return spool.commit_session("s", [trace], _items("s"), spans=1, cut=False)
    finally:
        spool.close()


@pytest.mark.parametrize(
    "loss",
    ["DELETE FROM done_sessions", "UPDATE done_sessions SET revisions = 0"],
    ids=["counter row lost", "counter set back"],
)
def test_a_lost_revision_counter_continues_after_the_revisions_the_spool_holds(
    tmp_path, loss: str
) -> None:
    path = tmp_path / "spool.sqlite"
    assert [_commit(path, "a"), _commit(path, "b")] == [0, 1]
    with sqlite3.connect(path) as conn:
        conn.execute(loss)
    # Revision 1's verdicts are still in the outbox: the next one is 2, never 0 or 1 again
    # (whose keys exist, so its verdicts would be dropped as already enqueued).
    assert _commit(path, "c") == 2
    assert _commit(path, "d") == 3
    outbox = _outbox(path)
    assert sorted(outbox.values()) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(outbox) == 8  # every evaluation's verdicts are there, none dropped
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT revisions FROM done_sessions").fetchall() == [(3,)]


def test_a_lost_counter_of_a_dead_lettered_session_does_not_reuse_revision_0(tmp_path) -> None:
    path = tmp_path / "spool.sqlite"
    spool = Spool(path, sinks=["jsonl"])
    try:
        assert spool.dead_letter("s", ["a"], spans=1, error="failed")
    finally:
        spool.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM done_sessions")
    # Only the dead-letter row and the evaluated trace remember revision 0.
    assert _commit(path, "b") == 1
    assert set(_outbox(path).values()) == {1}


def test_a_session_id_never_evaluated_still_starts_at_revision_0(tmp_path) -> None:
    path = tmp_path / "spool.sqlite"
    spool = Spool(path, sinks=["jsonl"])
    try:
        # Another session whose id begins the same: its keys are not this session's.
        assert spool.commit_session("s2", ["x"], _items("s2"), spans=1, cut=False) == 0
        assert spool.commit_session("s", ["a"], _items("s"), spans=1, cut=False) == 0
    finally:
        spool.close()
