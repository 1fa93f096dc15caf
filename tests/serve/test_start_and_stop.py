"""How ``aem serve`` starts and stops, through the real command: a busy port exits 2 with
the setting named (it used to be exit 3, "internal error", for gRPC); with no sink the
verdicts are printed one line each on standard output; the evaluation worker processes
end with the server on SIGTERM (they used to outlive it by a minute or two)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aem.serve.settings import UnusableSetting
from aem.serve.storelock import StoreLock
from tests.serve.conftest import PY, ROOT, send, wait_for
from tests.serve.expected import CASES, SAMPLES

pytestmark = pytest.mark.slow

HTTP_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize("receiver", ["grpc", "http"])
def test_busy_port_exits_2_naming_the_setting(tmp_path, busy_port, receiver) -> None:
    other = "http" if receiver == "grpc" else "grpc"
    command = [
        PY, "-c", "from aem.cli import main; main()", "serve",
        "--set", f"serve.{receiver}_port={busy_port}",
        "--set", f"serve.{other}_port=-1",
        "--set", f'serve.spool_path="{tmp_path / "spool.sqlite"}"',
        "--set", "serve.workers=0",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"serve.{receiver}_port" in done.stderr and str(busy_port) in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_without_a_sink_each_verdict_is_a_line_on_stdout(serve_factory) -> None:
    serve = serve_factory("serve", "--cases", str(CASES), "--workers", "0", jsonl=False)
    assert send("http", f"{serve.http}/v1/traces", [HTTP_FILE])["failed"] == 0

    def printed() -> list[dict]:
        text = serve.stdout_path.read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    lines = wait_for(printed, timeout=180, what="verdict lines on stdout")
    assert serve.stop() == 0
    lines = printed()
    assert {line["session_id"] for line in lines} == {"weather-oi"}
    assert all(line["verdict"] == line["label"] and line["turn_id"] for line in lines)
    turns = [line["turn_id"] for line in lines]
    assert len(turns) == len(set(turns))  # one line per turn verdict, not per metric


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    children = [int(c) for c in out.split()]
    return [grandchild for c in children for grandchild in (c, *_descendants(c))]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def test_worker_processes_end_with_the_server(serve_factory) -> None:
    if not os.path.isdir("/proc"):
        pytest.skip("reads process states from /proc")
    serve = serve_factory("serve", "--cases", str(CASES), "--workers", "2")
    assert send("http", f"{serve.http}/v1/traces", [HTTP_FILE])["failed"] == 0
    wait_for(serve.verdicts, timeout=120, what="a verdict (the workers evaluate)")
    # Its two workers, forked from the server at start, both running.
    workers = wait_for(
        lambda: (found := [p for p in _descendants(serve.proc.pid) if _running(p)])[1:] and found,
        timeout=30,
        what="the worker processes",
    )
    started = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(60) == 0
    exited = time.monotonic() - started
    wait_for(
        lambda: not [p for p in workers if _running(p)],
        timeout=3,
        interval=0.1,
        what=f"no worker left 3 s after the server exited ({exited:.1f} s after SIGTERM)",
    )
    serve.stop()


def test_a_second_server_on_the_same_store_refuses_naming_the_first(serve_factory) -> None:
    """Two servers on one spool would evaluate and deliver everything twice."""
    first = serve_factory("serve", "--workers", "0")
    command = [
        PY, "-c", "from aem.cli import main; main()", "serve",
        "--set", "serve.grpc_port=0", "--set", "serve.http_port=0",
        "--set", f'serve.spool_path="{first.spool}"',
        "--set", "serve.workers=0",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    flat = " ".join(done.stderr.split())
    assert "in use by another aem serve" in flat and str(first.spool) in flat
    assert f"pid {first.proc.pid}" in flat
    assert "Traceback" not in done.stderr
    assert first.stop() == 0  # the first one is untouched


def _lock_path_as(kind: str, spool: Path) -> None:
    lock = Path(f"{spool}.lock")
    if kind == "directory":
        lock.mkdir()
    elif kind == "dangling symlink":
        lock.symlink_to(spool.parent / "gone" / "nowhere.lock")
    else:
        (spool.parent / "elsewhere.lock").write_text("")
        lock.symlink_to(spool.parent / "elsewhere.lock")


@pytest.mark.parametrize("kind", ["directory", "dangling symlink", "symlink"])
def test_a_lock_path_that_is_no_plain_file_is_an_error_not_skipped(
    tmp_path: Path, kind: str
) -> None:
    """Was: the lock was given up and two servers ran on one spool."""
    spool = tmp_path / "spool.sqlite"
    _lock_path_as(kind, spool)
    with pytest.raises(UnusableSetting) as refused:
        StoreLock(spool).acquire()
    message = str(refused.value)
    assert f"the lock of {spool}, {spool}.lock, is a " in message
    assert "a second aem serve could run on the same spool" in message


def test_aem_serve_with_a_directory_as_its_lock_exits_2_naming_it(tmp_path: Path) -> None:
    spool = tmp_path / "spool.sqlite"
    _lock_path_as("directory", spool)
    command = [
        PY, "-c", "from aem.cli import main; main()", "serve",
        "--set", "serve.grpc_port=0", "--set", "serve.http_port=0",
        "--set", f'serve.spool_path="{spool}"', "--set", "serve.workers=0",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{spool}.lock, is a directory" in " ".join(done.stderr.split())
    assert not spool.exists()  # nothing was started on the spool


def test_two_locks_on_one_spool_one_holds_the_other_is_refused(tmp_path: Path) -> None:
    spool = tmp_path / "spool.sqlite"
    first = StoreLock(spool).acquire()
    with pytest.raises(UnusableSetting, match="in use by another aem serve"):
        StoreLock(spool).acquire()
    first.release()
    StoreLock(spool).acquire().release()  # released: the next start takes it
