"""kill -9 under load: how many spans ``aem serve`` acknowledged are lost when it is killed.

The red-team row "kill -9 under load: 0 acked spans lost", as a command. Each round:

1. starts a real ``aem serve`` (evaluation on, sessions idle after 1 s, JSONL sink) on a
   fresh spool;
2. sends it sessions through the real OpenTelemetry OTLP/gRPC exporter
   (``OTLPSpanExporter.export``) from several threads as fast as it answers; a span is
   *acknowledged* when the export call that carried it returned ``SUCCESS``. Each
   session is one trace of four SDK spans (an agent, two model calls, a tool call) and a
   batch carries whole traces, so no span of a trace can arrive after the trace was
   evaluated;
3. kills the server with SIGKILL at a random moment of the load (``--kill-after``);
4. reads the spool file as the kill left it: a span is *present* when its row is in
   ``spans`` (not evaluated yet) or its trace is in ``done_traces`` (evaluated: its
   verdicts were committed in the transaction that deleted its rows);
5. restarts the server on that spool and waits until every present session is
   evaluated, then checks each was evaluated once (``done_sessions``) with all its spans.

Reported per round: spans acknowledged, acknowledged and present, **lost** (acknowledged,
not present), present but never acknowledged (committed, the answer cut by the kill),
and after the restart the sessions evaluated and their spans. Results go to
bench/results/kill9-<time>.json (gitignored); the exit code is 1 when any acknowledged
span was lost or a session was evaluated short.

    python -m bench.serve.kill9 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.serve.launch import serve_command, serve_environment

ROOT = Path(__file__).resolve().parents[2]
SPANS_PER_SESSION = 4


def _sessions(count: int, seed: str) -> list[list[Any]]:
    """``count`` sessions made by the OpenTelemetry SDK, each one trace of four spans."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Keep(SpanExporter):
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def export(self, spans: Any) -> SpanExportResult:
            self.spans.extend(spans)
            return SpanExportResult.SUCCESS

    keep = Keep()
    provider = TracerProvider(resource=Resource({"service.name": "kill9-bench"}))
    provider.add_span_processor(SimpleSpanProcessor(keep))
    tracer = provider.get_tracer("bench.serve.kill9")
    sessions: list[list[Any]] = []
    for n in range(count):
        conversation = {"gen_ai.conversation.id": f"{seed}-{n}"}
        chat = {**conversation, "gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
        before = len(keep.spans)
        with tracer.start_as_current_span("invoke_agent bench", attributes=conversation):
            with tracer.start_as_current_span("chat m", attributes=chat):
                pass
            tool = {**conversation, "gen_ai.operation.name": "execute_tool"}
            with tracer.start_as_current_span("execute_tool lookup", attributes=tool):
                pass
            with tracer.start_as_current_span("chat m", attributes=chat):
                pass
        sessions.append(keep.spans[before:])
    provider.shutdown()
    return sessions


def _key(span: Any) -> tuple[str, str]:
    return format(span.context.trace_id, "032x"), format(span.context.span_id, "016x")


class Load:
    """Senders exporting batches of whole sessions until stopped; what was acknowledged."""

    def __init__(self, target: str, sessions: list[list[Any]], senders: int, batch: int) -> None:
        self.acked: set[tuple[str, str]] = set()
        self.failed_exports = 0
        self.finished = 0  # senders that sent their whole share
        self._lock = threading.Lock()
        self._stop = threading.Event()
        shares = [sessions[i::senders] for i in range(senders)]
        self._threads = [
            threading.Thread(target=self._send, args=(target, share, batch), daemon=True)
            for share in shares
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def _send(self, target: str, share: list[list[Any]], batch: int) -> None:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult

        exporter = OTLPSpanExporter(endpoint=target, insecure=True, timeout=5)
        try:
            for start in range(0, len(share), batch):
                if self._stop.is_set():
                    return
                spans = [s for session in share[start : start + batch] for s in session]
                ok = exporter.export(spans) is SpanExportResult.SUCCESS
                with self._lock:
                    if ok:
                        self.acked.update(_key(s) for s in spans)
                    else:
                        self.failed_exports += 1
            with self._lock:
                self.finished += 1
        finally:
            exporter.shutdown()


Server = tuple[subprocess.Popen[bytes], dict[str, int]]


def _serve(workdir: Path, spool: Path, idle: float) -> Server:
    ports = workdir / "ports.json"
    ports.unlink(missing_ok=True)
    cmd = serve_command(spool, ports, workdir / "verdicts.jsonl")
    cmd += ["--session-idle-seconds", str(idle), "--tick-seconds", "0.1"]
    env = serve_environment()
    log = (workdir / "serve.log").open("ab")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=log, env=env)
    deadline = time.monotonic() + 120
    while not ports.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"aem serve did not start; see {workdir / 'serve.log'}")
        time.sleep(0.05)
    return proc, dict(json.loads(ports.read_text()))


def _present(spool: Path) -> tuple[set[tuple[str, str]], set[str]]:
    """Span rows not evaluated yet, and the traces evaluated (or dead-lettered)."""
    with sqlite3.connect(spool) as conn:
        rows = {(t, s) for t, s in conn.execute("SELECT trace_id, span_id FROM spans")}
        rows |= {(t, s) for t, s in conn.execute("SELECT trace_id, span_id FROM dead_spans")}
        done = {t for (t,) in conn.execute("SELECT trace_id FROM done_traces")}
        pending = conn.execute("SELECT count(*) FROM requests").fetchone()[0]
    if pending:
        raise RuntimeError("raw requests in the spool: this bench runs with evaluation on")
    return rows, done


def _after_restart(workdir: Path, spool: Path, expected_sessions: int) -> dict[str, Any]:
    """Restart on the spool, wait until nothing is left to evaluate, stop with SIGTERM."""
    proc, _ = _serve(workdir, spool, idle=1.0)
    started = time.monotonic()
    try:
        while time.monotonic() - started < 600:
            with sqlite3.connect(spool) as conn:
                left = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
                done = conn.execute("SELECT count(*) FROM done_sessions").fetchone()[0]
            if left == 0 and done >= expected_sessions:
                break
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    with sqlite3.connect(spool) as conn:
        sessions, spans = conn.execute(
            "SELECT count(*), coalesce(sum(spans), 0) FROM done_sessions"
        ).fetchone()
        short = conn.execute(
            "SELECT count(*) FROM done_sessions WHERE spans != ?", (SPANS_PER_SESSION,)
        ).fetchone()[0]
        left = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    return {
        "sessions_evaluated": sessions,
        "spans_evaluated": spans,
        "sessions_not_whole": short,
        "spans_left_unevaluated": left,
        "restart_to_drained_seconds": round(time.monotonic() - started, 1),
        "restart_exit_code": proc.returncode,
    }


def _round(args: argparse.Namespace, number: int, sessions: list[list[Any]]) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"aem-kill9-{number}-"))
    spool = workdir / "spool.sqlite"
    proc, ports = _serve(workdir, spool, idle=1.0)
    load = Load(f"127.0.0.1:{ports['grpc']}", sessions, args.senders, args.batch)
    kill_after = random.uniform(*args.kill_after)
    load.start()
    time.sleep(kill_after)
    senders_done = load.finished
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    load.stop()
    rows, done = _present(spool)
    present = {key for key in load.acked if key in rows or key[0] in done}
    sent_traces = {key[0] for key in rows} | done
    result = {
        "round": number,
        "killed_after_seconds": round(kill_after, 2),
        "under_load_at_the_kill": senders_done == 0,  # no sender had sent all its share
        "spans_acknowledged": len(load.acked),
        "acknowledged_present": len(present),
        "acknowledged_lost": len(load.acked) - len(present),
        "present_not_acknowledged": len(rows) + SPANS_PER_SESSION * len(done) - len(present),
        "failed_exports_after_the_kill": load.failed_exports,
        "evaluated_before_the_kill": len(done),
    }
    result |= _after_restart(workdir, spool, len(sent_traces))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=12000, help="sessions made per round")
    parser.add_argument("--senders", type=int, default=4, help="exporting threads")
    parser.add_argument("--batch", type=int, default=16, help="sessions per export call")
    parser.add_argument(
        "--kill-after", type=float, nargs=2, default=(1.5, 6.0), metavar=("MIN", "MAX")
    )
    args = parser.parse_args(argv)
    results = []
    for number in range(1, args.rounds + 1):
        sessions = _sessions(args.sessions, f"kill9-{number}-{os.getpid()}")
        results.append(_round(args, number, sessions))
        print(json.dumps(results[-1]), flush=True)
    out = ROOT / "bench" / "results" / f"kill9-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "rounds": results}, indent=2))
    lost = sum(r["acknowledged_lost"] for r in results)
    short = sum(r["sessions_not_whole"] + r["spans_left_unevaluated"] for r in results)
    acked = sum(r["spans_acknowledged"] for r in results)
    print(f"{acked} spans acknowledged over {len(results)} kills: {lost} lost; {out}")
    idle = sum(not r["under_load_at_the_kill"] for r in results)
    if idle:
        print(f"{idle} kill(s) came after a sender had finished: raise --sessions")
    return 1 if lost or short or idle else 0


if __name__ == "__main__":
    raise SystemExit(main())
