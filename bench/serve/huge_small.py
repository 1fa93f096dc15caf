"""How long a small session's verdict waits while one huge session is ingested and evaluated.

    python -m bench.serve.huge_small [--huge-spans 300000] [--batch 500] [--small-after 0.5]
        [--small-every 5] [--small-tail 30] [--workers 0] [--idle 2] [--py-spy] [-- FLAG ...]

A real ``aem serve`` (OTLP/HTTP only, in-process evaluation by default: ``workers = 0``)
gets one huge session, sent as fast as the server accepts it by one sender thread
(protobuf requests of ``--batch`` spans; a 429/503 is honoured and resent), and, once
``--small-after`` of the huge session's requests are accepted, a small session (a copy
of a sample session) every ``--small-every`` seconds from a second thread, until the huge
session's verdict is delivered and ``--small-tail`` seconds more (its verdict rows are
being delivered then). What is reported: each small session's latency, from the
acknowledgement of its last request to its verdict line in the JSONL sink (the idle
timeout included), their maximum, how long its requests took to be acknowledged, and,
for scale, the huge session's sending time and its verdict's arrival.

Why pre-encoded and why ids swapped in the bytes: encoding a million spans with the
Python protobuf runtime takes minutes; the huge session is one request of copies of the
sample session (all under session id ``huge``) serialized once, and each request sent
is that template with fresh trace ids written over the template's (16 random bytes each).

``--py-spy`` records a py-spy profile of the server (raw collapsed stacks, per thread)
for the whole run into the work directory (``py-spy`` must be on PATH or in the venv).
Flags after ``--`` go to ``aem serve`` as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from bench.serve.workload import copy_session, sample_requests

ROOT = Path(__file__).resolve().parents[2]
PROTOBUF = {"Content-Type": "application/x-protobuf"}
HUGE_TEMPLATE_SAMPLE = "weather-genai"
SMALL_SAMPLE = "weather-oi"


def huge_template(batch: int) -> tuple[bytes, list[bytes]]:
    """One request of about ``batch`` spans, all of session ``huge``, and its trace ids."""
    samples = dict(sample_requests())
    request = ExportTraceServiceRequest()
    spans = 0
    while spans < batch:
        for part in copy_session(samples[HUGE_TEMPLATE_SAMPLE], HUGE_TEMPLATE_SAMPLE, "huge"):
            request.resource_spans.extend(part.resource_spans)
            spans += sum(len(ss.spans) for rs in part.resource_spans for ss in rs.scope_spans)
    traces = {
        span.trace_id for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans
    }
    return request.SerializeToString(), sorted(traces)


def fresh_body(template: bytes, traces: list[bytes]) -> bytes:
    """The template with every trace id replaced by a fresh one (a new copy of its traces)."""
    body = template
    for trace in traces:
        body = body.replace(trace, os.urandom(len(trace)))
    return body


def small_session(name: str) -> list[bytes]:
    samples = dict(sample_requests())
    return [r.SerializeToString() for r in copy_session(samples[SMALL_SAMPLE], SMALL_SAMPLE, name)]


def post(client: httpx.Client, url: str, body: bytes) -> int:
    """Post until accepted; returns the number of push-backs."""
    pushed_back = 0
    while True:
        status = client.post(url, content=body, headers=PROTOBUF).status_code
        if status == 200:
            return pushed_back
        if status not in (429, 503):
            raise SystemExit(f"request refused with {status}")
        pushed_back += 1
        time.sleep(0.05)


class Run:
    """One server, one huge sender, one small sender; times kept as monotonic seconds."""

    def __init__(self, work: Path, args: argparse.Namespace) -> None:
        self.work = work
        self.args = args
        self.times: dict[str, float] = {}
        self.huge_sent_fraction = threading.Event()
        self.small_sent: dict[str, float] = {}
        self.small_sending: dict[str, tuple[float, int]] = {}  # seconds, push-backs
        self._read_to = 0
        self.proc = self._start()
        self.url = f"http://127.0.0.1:{self._port()}/v1/traces"

    def _start(self) -> subprocess.Popen[bytes]:
        a = self.args
        cmd = [
            sys.executable, "-m", "aem.serve", "--grpc-port", "-1", "--http-port", "0",
            "--spool-path", str(self.work / "spool.sqlite"),
            "--ports-file", str(self.work / "ports.json"),
            "--jsonl-path", str(self.work / "verdicts.jsonl"),
            "--session-idle-seconds", str(a.idle), "--workers", str(a.workers),
            "--spool-synchronous", "NORMAL", "--log-level", "INFO", *a.serve_args,
        ]  # fmt: skip
        log = (self.work / "serve.log").open("wb")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}
        return subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=log, env=env)

    def _port(self) -> int:
        ports = self.work / "ports.json"
        deadline = time.monotonic() + 120
        while not ports.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start; see {self.work / 'serve.log'}")
            time.sleep(0.05)
        return int(json.loads(ports.read_text())["http"])

    def verdict_times(self, seen: dict[str, float]) -> dict[str, float]:
        """When each session's first verdict line was seen (the file read on from where
        the last call stopped: the huge session writes about 3 lines per span)."""
        path = self.work / "verdicts.jsonl"
        if not path.exists():
            return seen
        with path.open("rb") as file:
            file.seek(self._read_to)
            data = file.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._read_to += len(complete)
        now = time.monotonic()
        for line in complete.splitlines():
            if line.strip():
                seen.setdefault(json.loads(line)["session_id"], now)
        return seen

    def send_huge(self, template: bytes, traces: list[bytes], requests: int) -> None:
        pushed_back = 0
        with httpx.Client(timeout=60) as client:
            self.times["huge_start"] = time.monotonic()
            for i in range(requests):
                pushed_back += post(client, self.url, fresh_body(template, traces))
                if i + 1 >= requests * self.args.small_after:
                    self.huge_sent_fraction.set()
        self.times["huge_sent"] = time.monotonic()
        self.times["huge_push_backs"] = pushed_back

    def send_smalls(self, done: threading.Event) -> None:
        """A small session every ``--small-every`` seconds until ``done`` (the huge
        session's verdict seen ``--small-tail`` seconds ago), and one more; each one's
        last acknowledgement kept."""
        self.huge_sent_fraction.wait()
        with httpx.Client(timeout=60) as client:
            i = 0
            while True:
                name = f"small-{i}"
                started, pushed_back = time.monotonic(), 0
                for body in small_session(name):
                    pushed_back += post(client, self.url, body)
                self.small_sent[name] = time.monotonic()
                self.small_sending[name] = (self.small_sent[name] - started, pushed_back)
                i += 1
                if done.is_set():
                    return
                done.wait(self.args.small_every)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def warm_up(run: Run) -> None:
    """One small session first: the first evaluation loads the comparison model."""
    with httpx.Client(timeout=60) as client:
        for body in small_session("warm"):
            post(client, run.url, body)
    seen: dict[str, float] = {}
    while "warm" not in run.verdict_times(seen):
        time.sleep(0.2)


def measure(run: Run) -> dict[str, Any]:
    a = run.args
    template, traces = huge_template(a.batch)
    per_request = ExportTraceServiceRequest.FromString(template)
    batch = sum(len(ss.spans) for rs in per_request.resource_spans for ss in rs.scope_spans)
    requests = max(1, a.huge_spans // batch)
    warm_up(run)
    done = threading.Event()
    huge = threading.Thread(target=run.send_huge, args=(template, traces, requests))
    smalls = threading.Thread(target=run.send_smalls, args=(done,))
    huge.start()
    smalls.start()
    seen: dict[str, float] = {}
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline:
        run.verdict_times(seen)
        if "huge" in seen and time.monotonic() - seen["huge"] >= a.small_tail:
            done.set()
        if done.is_set() and not smalls.is_alive() and set(run.small_sent) <= set(seen):
            break
        time.sleep(0.1)
    done.set()
    huge.join()
    smalls.join()
    t = run.times
    start = t["huge_start"]
    latencies = [
        {
            "session": name,
            "sent_at_s": round(sent - start, 1),
            "latency_s": round(seen[name] - sent, 2) if name in seen else None,
            "send_s": round(run.small_sending[name][0], 2),
            "push_backs": run.small_sending[name][1],
        }
        for name, sent in run.small_sent.items()
    ]
    measured = [x["latency_s"] for x in latencies if x["latency_s"] is not None]
    return {
        "huge_spans": requests * batch,
        "batch_spans": batch,
        "huge_send_seconds": round(t["huge_sent"] - start, 1),
        "huge_push_backs": t["huge_push_backs"],
        "huge_verdict_at_s": round(seen["huge"] - start, 1) if "huge" in seen else None,
        "huge_verdict_lines": sum(1 for _ in (run.work / "verdicts.jsonl").open()),
        "small_latency_max_s": max(measured, default=None),
        "small_sessions": latencies,
        "idle_seconds": a.idle,
        "workers": a.workers,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--huge-spans", type=int, default=300_000)
    parser.add_argument("--batch", type=int, default=500, help="spans per huge request (about)")
    parser.add_argument(
        "--small-after", type=float, default=0.5,
        help="fraction of the huge session's requests accepted before the small one is sent",
    )  # fmt: skip
    parser.add_argument(
        "--small-every", type=float, default=5.0, help="seconds between small sessions"
    )
    parser.add_argument(
        "--small-tail", type=float, default=30.0,
        help="seconds small sessions go on after the huge session's first verdict line "
        "(its backlog is delivered then)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--idle", type=float, default=2.0, help="session_idle_seconds")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--py-spy", action="store_true")
    parser.add_argument("serve_args", nargs="*", help="more aem serve flags (after --)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aem-bench-huge-small-"))
    run = Run(work, args)
    spy = None
    try:
        if args.py_spy:
            exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
            spy = subprocess.Popen(
                [exe, "record", "-p", str(run.proc.pid), "-o", str(work / "profile.txt"),
                 "-f", "raw", "-t", "-r", "50"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        result = measure(run)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        run.stop()
    result["work"] = str(work)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
