"""Fixtures for live-mode tests: real ``python -m aem.serve`` processes, stopped by
PID in finalizers, ports chosen by the OS (port 0) and read back from a ports file."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.serve.launch import serve_command, serve_environment

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_traces"
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process a test started (and its children: its own process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def post_otlp_json(port: int, lines: list[str]) -> None:
    """POST each OTLP/JSON request (a line of a trace file) to ``/v1/traces``; each must
    be accepted. The plain HTTP a hand-rolled client sends, without the SDK's exporter."""
    import urllib.request

    for line in lines:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/traces",
            data=line.encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200


PROTOBUF = {"Content-Type": "application/x-protobuf"}


def post_until_accepted(client: httpx.Client, url: str, bodies: list[bytes]) -> None:
    """POST each OTLP/protobuf request, again while the server pushes back (429/503), until
    it is accepted: a test that fills the server must not fail on its backpressure."""
    for body in bodies:
        wait_for(
            lambda b=body: client.post(url, content=b, headers=PROTOBUF).status_code == 200,
            timeout=120,
            interval=0.2,
            what="the request accepted",
        )


def stop_with_sigterm(server: subprocess.Popen[str]) -> int:
    """Stop a server as an operator would (SIGTERM, then a kill after 60 s); its exit code."""
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=10)
    return server.returncode


def wait_http(url: str, proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Poll ``url`` until it answers 200; ``False`` if the process exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


class Serve:
    """One ``aem serve`` subprocess."""

    def __init__(
        self,
        workdir: Path,
        args: list[str],
        *,
        reuse_spool: Path | None = None,
        prefix: list[str] | None = None,
        wait: bool = True,
        jsonl: bool = True,
    ) -> None:
        """``prefix`` runs the server under another command (e.g. ``unshare`` for a small
        filesystem of its own); ``wait=False`` does not wait for the ports (start errors);
        ``jsonl=False`` configures no sink (verdicts then go to standard output, which is
        kept in ``stdout.log``; the logs are in ``serve.log``)."""
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.ports_file = workdir / "ports.json"
        self.ports_file.unlink(missing_ok=True)
        self.spool = reuse_spool or workdir / "spool.sqlite"
        self.jsonl = workdir / "verdicts.jsonl"
        self.log_path = workdir / "serve.log"
        self.stdout_path = workdir / "stdout.log"
        cmd = [
            *(prefix or []),
            *serve_command(self.spool, self.ports_file, self.jsonl if jsonl else None),
            "--session-idle-seconds",
            "1",
            "--tick-seconds",
            "0.1",
            "--delivery-poll-seconds",
            "0.1",
            "--delivery-retry-initial-seconds",
            "0.2",
            "--delivery-retry-max-seconds",
            "1",
            *args,
        ]
        self._log = self.log_path.open("ab")
        self._stdout = self.stdout_path.open("ab")
        env = serve_environment()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self._stdout, stderr=self._log, env=env)
        self.ports = self._wait_ports() if wait else {}

    def _wait_ports(self, timeout: float = 90.0) -> dict[str, int]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ports_file.exists():
                return dict(json.loads(self.ports_file.read_text()))
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise TimeoutError(f"serve did not start:\n{self.log()}")

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.ports['grpc']}"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.ports['http']}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def verdicts(self) -> list[dict]:
        """The verdict lines written so far: only whole lines, since the server may be
        writing the last one while a test polls (a cut line is no verdict yet)."""
        if not self.jsonl.exists():
            return []
        text = self.jsonl.read_text()
        whole = text[: text.rfind("\n") + 1]
        return [json.loads(line) for line in whole.splitlines() if line]

    def stop(self, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_files()
        return int(self.proc.returncode)

    def _close_files(self) -> None:
        self._log.close()
        self._stdout.close()

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._close_files()


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator:
    started: list[Serve] = []

    def start(
        name: str = "serve",
        *args: str,
        reuse_spool: Path | None = None,
        prefix: list[str] | None = None,
        wait: bool = True,
        jsonl: bool = True,
    ) -> Serve:
        serve = Serve(
            tmp_path / name,
            list(args),
            reuse_spool=reuse_spool,
            prefix=prefix,
            wait=wait,
            jsonl=jsonl,
        )
        started.append(serve)
        return serve

    yield start
    for serve in started:
        if serve.proc.poll() is None:
            serve.proc.kill()
            serve.proc.wait()


def send(
    protocol: str, endpoint: str, files: list[Path], *extra: str, timeout: float = 120
) -> dict:
    """Run the real-exporter sender in its own process; returns its JSON summary."""
    out = subprocess.run(
        [
            PY,
            str(Path(__file__).parent / "sender.py"),
            "--protocol",
            protocol,
            "--endpoint",
            endpoint,
            *extra,
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert out.stdout, out.stderr
    result: dict = json.loads(out.stdout.strip().splitlines()[-1])
    result["returncode"] = out.returncode
    result["stderr"] = out.stderr[-5000:]  # the exporter logs why an export failed
    return result


def metric(base_url: str, sample: str, verify: Any = True, **labels: str) -> float:
    """One sample of the server's ``/metrics`` (0.0 when it is not there yet)."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{base_url}/metrics", verify=verify, timeout=10).text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == sample and s.labels == labels:
                return float(s.value)
    return 0.0


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")
