"""Faults that must not wedge the server or lose spans, through the real server: a full
disk and space again, a poison span, a spool that cannot be opened, an exposed receiver,
an empty token, and a worker thread that dies.

The full disk is real: the server runs in its own mount namespace (``unshare``, no
privileges needed) with its spool on a 6 MB tmpfs; the test fills and frees that
filesystem through ``/proc/<pid>/root``."""

from __future__ import annotations

import errno
import os
import pickle
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client import Counter

from aem.foundation.model import SourceRef, SpanRecord
from aem.serve.settings import ServeSettings
from aem.serve.supervisor import Supervisor
from tests.serve.conftest import PY, ROOT, metric, send, wait_for
from tests.serve.expected import SAMPLES

pytestmark = pytest.mark.slow

GOOD_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
OTHER_FILE = SAMPLES / "weather_genai.otlp.jsonl"  # session "weather-genai"


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True
    )
    return probe.returncode == 0


def in_namespace(mount_script: str, directory: Path) -> list[str]:
    """A command prefix: run in a private mount namespace after ``mount_script`` (sh)."""
    if not _unshare_works():
        pytest.skip("needs unprivileged user namespaces (unshare --user --mount)")
    return [
        "unshare", "--user", "--map-root-user", "--mount",
        "sh", "-c", mount_script + ' && exec "$@"', str(directory),
    ]  # fmt: skip


def fill(directory: Path) -> Path:
    """Write into ``directory`` until the filesystem has no byte left; returns the file."""
    path = directory / "filler"
    with path.open("wb", buffering=0) as f:
        for size in (1 << 20, 1 << 12, 1):
            while True:
                try:
                    f.write(b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    return path


def _verdict_sessions(serve) -> set[str]:
    return {line["session_id"] for line in serve.verdicts()}


def test_full_disk_then_space_again_recovers_by_itself(serve_factory, tmp_path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    serve = serve_factory(
        "serve",
        "--spool-path", str(small / "spool.sqlite"),
        "--spool-synchronous", "NORMAL",
        "--retry-after-seconds", "0.2",
        prefix=in_namespace('mount -t tmpfs -o size=6m tmpfs "$0"', small),
    )  # fmt: skip
    # The server's view of its small filesystem (the test's own view of `small` is empty).
    inside = Path(f"/proc/{serve.proc.pid}/root") / str(small).lstrip("/")
    assert (inside / "spool.sqlite").exists()
    assert send("http", f"{serve.http}/v1/traces", [GOOD_FILE])["failed"] == 0
    # Acknowledged, then the disk fills before the session is evaluated and committed.
    with sqlite3.connect(inside / "spool.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every later write needs new space
    filler = fill(inside)
    # New spans are refused (503 with a retry hint), /readyz says why, nothing dies.
    body = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()[0]
    refused = httpx.post(f"{serve.http}/v1/traces", content=body,
                         headers={"Content-Type": "application/json"})  # fmt: skip
    assert refused.status_code == 503 and "Retry-After" in refused.headers, refused.text
    ready = httpx.get(f"{serve.http}/readyz")
    assert ready.status_code == 503 and "spool write failing" in ready.text
    wait_for(
        lambda: metric(serve.http, "aem_spool_write_errors_total", op="commit_session") >= 1,
        timeout=30,
        what="the evaluator's commit failing (and retrying)",
    )
    assert metric(serve.http, "aem_spool_failing") == 1
    # Space again: the server recovers by itself — no restart, no client needed.
    filler.unlink()
    wait_for(lambda: httpx.get(f"{serve.http}/readyz").status_code == 200, timeout=30,
             what="ready again")  # fmt: skip
    wait_for(lambda: "weather-oi" in _verdict_sessions(serve), timeout=30,
             what="the acknowledged session evaluated after all")  # fmt: skip
    assert send("http", f"{serve.http}/v1/traces", [OTHER_FILE])["failed"] == 0
    wait_for(lambda: _verdict_sessions(serve) == {"weather-oi", "weather-genai"}, timeout=60,
             what="a new session accepted and evaluated")  # fmt: skip
    for thread in ("assembler", "evaluator-0", "spool-writer", "sink-jsonl"):
        assert metric(serve.http, "aem_thread_restarts_total", thread=thread) == 0
    assert serve.stop() == 0


def _poison_spool(path: Path) -> None:
    """A spool as an older version left it: one acknowledged span whose attribute key is
    an integer (OTLP/JSON accepted it), which makes evaluation raise."""
    from aem.serve.spool import Spool

    poison = SpanRecord(
        "ab" * 16, "cd" * 8, None, "invoke_agent", end_unix_nano=2,
        attributes={"gen_ai.conversation.id": "poisoned", "gen_ai.tool.definitions": "[]", 5: "x"},
        origin=SourceRef("http:127.0.0.1"),
    )  # fmt: skip
    spool = Spool(path)
    spool.append([poison], [pickle.dumps(poison)])
    spool.close()


def test_poison_span_goes_to_dead_letter_once(serve_factory, tmp_path) -> None:
    spool = tmp_path / "spool.sqlite"
    _poison_spool(spool)
    serve = serve_factory("serve", reuse_spool=spool)
    wait_for(lambda: metric(serve.http, "aem_dead_letter_sessions") == 1, timeout=30,
             what="the failing session dead-lettered")  # fmt: skip
    assert metric(serve.http, "aem_sessions_failed_total") == 1
    log = serve.log()
    assert "session moved to the dead-letter table" in log and "AttributeError" in log
    # The same poison arriving over OTLP/JSON now is refused at the door ...
    doc = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()[0]
    bad = doc.replace('"attributes":[', '"attributes":[{"key":5,"value":{"stringValue":"x"}},', 1)
    r = httpx.post(f"{serve.http}/v1/traces", content=bad,
                   headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 200 and r.json()["partialSuccess"]["rejectedSpans"] == "1"
    # ... while a well-behaved exporter's session is accepted and evaluated.
    assert send("http", f"{serve.http}/v1/traces", [GOOD_FILE])["failed"] == 0
    wait_for(lambda: "weather-oi" in _verdict_sessions(serve), timeout=60, what="verdicts")
    assert serve.stop() == 0
    with sqlite3.connect(spool) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM dead_spans").fetchone()[0] == 1
        [(error,)] = conn.execute("SELECT error FROM dead_letter WHERE session_id = 'poisoned'")
    assert error.startswith("AttributeError")
    # A restart does not evaluate it again: out of the retry loop for good.
    again = serve_factory("again", reuse_spool=spool)
    time.sleep(2)
    assert metric(again.http, "aem_sessions_failed_total") == 0
    assert metric(again.http, "aem_dead_letter_sessions") == 1
    assert again.stop() == 0


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ('mount -t tmpfs -o ro tmpfs "$0"', "cannot open"),  # missing, cannot be created
        (
            'mount -t tmpfs tmpfs "$0" && touch "$0/spool.sqlite" && mount -o remount,ro "$0"',
            "not writable",
        ),  # exists, read-only
    ],
)
def test_unusable_spool_is_one_line_not_a_traceback(serve_factory, tmp_path, script, why) -> None:
    spool_dir = tmp_path / "ro"
    spool_dir.mkdir()
    serve = serve_factory(
        "serve",
        "--spool-path", str(spool_dir / "spool.sqlite"),
        prefix=in_namespace(script, spool_dir),
        wait=False,
    )  # fmt: skip
    assert serve.proc.wait(60) == 2  # the operator's set-up to fix, the setting named
    lines = [line for line in serve.log().splitlines() if line.strip()]
    assert "Traceback" not in serve.log()
    [error] = [line for line in lines if '"level":"error"' in line]
    assert "cannot start" in error and why in error and "spool.sqlite" in error
    assert "serve.spool_path" in error


def test_empty_token_is_refused_and_exposure_warned(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    empty = subprocess.run(
        [PY, "-m", "aem.serve", "--bearer-token", "", "--spool-path", str(tmp_path / "s")],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
    )  # fmt: skip
    assert empty.returncode == 2 and "bearer_token is empty" in empty.stderr
    assert ServeSettings(host="0.0.0.0", allow_non_loopback=True).exposure_warnings()
    assert not ServeSettings(host="127.0.0.1").exposure_warnings()
    # Listening on every address, but in a network namespace of its own: nothing is exposed.
    if not _unshare_works():
        pytest.skip("needs unprivileged user namespaces")
    ports = tmp_path / "ports.json"
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        ["unshare", "--user", "--map-root-user", "--net", PY, "-m", "aem.serve",
         "--host", "0.0.0.0", "--allow-non-loopback", "true", "--grpc-port", "-1",
         "--http-port", "0", "--ports-file", str(ports), "--spool-path", str(tmp_path / "s")],
        cwd=ROOT, env=env, stdout=log, stderr=log,
    )  # fmt: skip
    try:
        wait_for(ports.exists, timeout=60, what="the server listening")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        log.close()
    text = (tmp_path / "serve.log").read_text()
    assert "exposed receiver: no bearer_token" in text
    assert "exposed receiver: no TLS" in text


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_supervisor_restarts_a_dead_worker_and_counts_it() -> None:
    restarts = Counter("t_restarts", "", ["thread"], registry=None)
    runs: list[threading.Thread] = []

    def work() -> None:
        if len(runs) == 1:
            raise RuntimeError("an unexpected bug ends the first run")
        time.sleep(5)

    def restart() -> None:
        runs.append(threading.Thread(target=work, daemon=True))
        runs[-1].start()

    restart()
    supervisor = Supervisor(restarts, interval=0.05)
    supervisor.watch("worker", lambda: runs[-1].is_alive(), restart)
    supervisor.start()
    try:
        wait_for(lambda: len(runs) == 2 and runs[-1].is_alive(), timeout=5, what="restart")
    finally:
        supervisor.stop()
    assert restarts.labels("worker")._value.get() == 1
    assert supervisor.dead == []
