"""Benchmark ``aem serve``: sustained spans/s over OTLP/gRPC with the sample mix.

Pre-encoded requests (bench/serve/workload.py) are sent by several sender processes over
raw gRPC (one OTel SDK sender process encodes only ~11–14 k spans/s and would be the
bottleneck). A RESOURCE_EXHAUSTED answer is honoured (sleep the RetryInfo delay, resend)
and counted as push-back; any other failure is counted as dropped. Reported: accepted
spans/s while sending, end-to-end spans/s until the last verdict left, the delay from a
session's completion to its verdict being written by the JSONL sink (p50/p99), and the
server's peak RSS. Results go to bench/results/serve-<time>.json (gitignored).

    python -m bench.serve.run --sessions 2000 --senders 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _sender(target: str, payloads: list[bytes], out: mp.Queue) -> None:
    import grpc
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    accepted = pushed_back = dropped = 0
    with grpc.insecure_channel(target) as channel:
        export = channel.unary_unary(METHOD)
        for body in payloads:
            while True:
                try:
                    export(body, timeout=30)
                    accepted += 1
                    break
                except grpc.RpcError as exc:
                    if exc.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED:
                        dropped += 1
                        break
                    pushed_back += 1
                    delay = 0.05
                    status = rpc_status.from_call(exc)
                    info = error_details_pb2.RetryInfo()
                    if status is not None and status.details and status.details[0].Unpack(info):
                        delay = info.retry_delay.ToNanoseconds() / 1e9
                    time.sleep(delay)
    out.put({"accepted": accepted, "pushed_back": pushed_back, "dropped": dropped})


def _payloads(
    sessions: int, senders: int, spans_per_request: int, prefix: str = "bench"
) -> tuple[list[list[bytes]], int]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from bench.serve.workload import session_copies

    shares: list[list[bytes]] = [[] for _ in range(senders)]
    pending = [(ExportTraceServiceRequest(), 0) for _ in range(senders)]
    total_spans = 0
    for i, (_, requests) in enumerate(session_copies(sessions, prefix=prefix)):
        share = shares[i % senders]
        merged, n = pending[i % senders]
        for body in requests:
            part = ExportTraceServiceRequest.FromString(body)
            merged.MergeFrom(part)
            n += sum(len(ss.spans) for rs in part.resource_spans for ss in rs.scope_spans)
            if n >= spans_per_request:
                share.append(merged.SerializeToString())
                total_spans += n
                merged, n = ExportTraceServiceRequest(), 0
        pending[i % senders] = (merged, n)
    for share, (merged, n) in zip(shares, pending, strict=True):
        if n:
            share.append(merged.SerializeToString())
            total_spans += n
    return shares, total_spans


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _evaluated(spool: Path) -> tuple[int, int]:
    import sqlite3

    with sqlite3.connect(spool) as conn:
        row = conn.execute("SELECT count(*), coalesce(sum(spans), 0) FROM done_sessions").fetchone()
    return int(row[0]), int(row[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--senders", type=int, default=3)
    parser.add_argument("--spans-per-request", type=int, default=64)
    parser.add_argument("--idle", type=float, default=1.0, help="session idle seconds")
    parser.add_argument("--synchronous", choices=["FULL", "NORMAL"], default="FULL")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()

    shares, total_spans = _payloads(args.sessions, args.senders, args.spans_per_request)
    work = Path(tempfile.mkdtemp(prefix="aem-bench-serve-"))
    ports_file, jsonl, spool = work / "ports.json", work / "verdicts.jsonl", work / "spool.sqlite"
    log = (work / "serve.log").open("wb")
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aem.serve",
            "--grpc-port",
            "0",
            "--http-port",
            "0",
            "--spool-path",
            str(spool),
            "--ports-file",
            str(ports_file),
            "--jsonl-path",
            str(jsonl),
            "--session-idle-seconds",
            str(args.idle),
            "--spool-synchronous",
            args.synchronous,
            "--retry-after-seconds",
            "0.1",
            "--log-level",
            "WARNING",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=log,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        while not ports_file.exists():
            if serve.poll() is not None:
                raise SystemExit(f"serve exited; see {work / 'serve.log'}")
            time.sleep(0.05)
        target = f"127.0.0.1:{json.loads(ports_file.read_text())['grpc']}"
        out: mp.Queue = mp.Queue()
        procs = [mp.Process(target=_sender, args=(target, share, out)) for share in shares]
        started = time.perf_counter()
        for p in procs:
            p.start()
        results = [out.get(timeout=args.timeout) for _ in procs]
        for p in procs:
            p.join()
        sent_s = time.perf_counter() - started
        deadline = time.monotonic() + args.timeout
        while _evaluated(spool)[0] < args.sessions and time.monotonic() < deadline:
            time.sleep(0.1)
        sessions_done, spans_done = _evaluated(spool)
        while jsonl.exists() and time.monotonic() < deadline:
            lines = jsonl.read_text().splitlines()
            if len({json.loads(x)["session_id"] for x in lines}) >= sessions_done:
                break
            time.sleep(0.1)
        end_to_end_s = time.perf_counter() - started
        rss = _peak_rss_mb(serve.pid)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(120)
        log.close()

    first_out: dict[str, float] = {}
    completed: dict[str, float] = {}
    for line in jsonl.read_text().splitlines():
        rec = json.loads(line)
        sid = rec["session_id"]
        first_out[sid] = min(first_out.get(sid, rec["delivered_at"]), rec["delivered_at"])
        completed[sid] = rec["completed_at"]
    delays = sorted(first_out[s] - completed[s] for s in first_out)
    q = statistics.quantiles(delays, n=100) if len(delays) >= 2 else delays * 99
    result = {
        "sessions": args.sessions,
        "spans": total_spans,
        "senders": args.senders,
        "spans_per_request": args.spans_per_request,
        "synchronous": args.synchronous,
        "accepted_requests": sum(r["accepted"] for r in results),
        "pushed_back": sum(r["pushed_back"] for r in results),
        "dropped": sum(r["dropped"] for r in results),
        "sessions_evaluated": sessions_done,
        "spans_evaluated": spans_done,
        "accept_spans_per_s": round(total_spans / sent_s),
        "end_to_end_spans_per_s": round(spans_done / end_to_end_s),
        "completion_to_verdict_p50_ms": round(q[49] * 1000, 1),
        "completion_to_verdict_p99_ms": round(q[98] * 1000, 1),
        "serve_peak_rss_mb": round(rss, 1),
        "cpus": os.cpu_count(),
    }
    width = max(map(len, result))
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    results_dir = ROOT / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"serve-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"written {path.relative_to(ROOT)}")
    return 0 if result["dropped"] == 0 and sessions_done == args.sessions else 1


if __name__ == "__main__":
    raise SystemExit(main())
