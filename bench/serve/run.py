"""Benchmark ``aem serve``: accepted spans/s, push-back, ack latency and end-to-end rate.

The load (bench/serve/load.py) is open loop: pre-encoded requests (bench/serve/workload.py)
at a target rate, many in flight per gRPC channel or over many kept-alive HTTP connections,
from several sender processes — so the generator is not the bottleneck (it reports how far
it fell behind its own schedule). Reported per run: accepted spans/s (first send → last
ack), push-back answers, dropped requests, p50/p99 ack latency, and, with evaluation on,
end-to-end spans/s (until the last verdict is written by the JSONL sink) and the delay from
a session's completion to its verdict (p50/p99); the server's peak RSS (and its worker
processes' RSS) always. Beside the wall-clock rates, the server's CPU microseconds per span
(from /proc): on a machine shared with other load the wall rate measures the neighbours
too, the CPU cost per span does not. ``--rounds N`` alternates the servers N times and
reports medians.

``--pause-evaluation`` runs the server with ``spool_only`` (accept and spool, evaluate
nothing), which measures the receive path alone. ``--baseline REV`` also runs the same
load, in the same invocation, against the server of git revision ``REV`` (exported to a
temporary directory) and prints the ratios; a baseline without ``spool_only`` is "paused"
by sessions that never go idle during the run. Results go to
bench/results/serve-<time>.json (gitignored).

    python -m bench.serve.run --sessions 2000 --senders 2 --in-flight 16
    python -m bench.serve.run --pause-evaluation --sessions 12000 --baseline HEAD~3
    python -m bench.serve.run --rate 6000   # open loop at 6 k spans/s, e.g. 2x capacity
    python -m bench.serve.run --sessions 1000 --mix sample,unique

``--mix`` chooses the sessions: ``sample`` (copies of the sample sessions with fresh ids:
their texts repeat, so after the first copy every embedding is a cache hit), ``unique``
(:func:`bench.serve.workload.unique_copies`: no text repeats, as in production), or both,
each its own column.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import sqlite3
import statistics
import subprocess
import tarfile
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.serve.launch import serve_command, serve_environment

ROOT = Path(__file__).resolve().parents[2]
GiB = 1024**3


def _payloads(
    sessions: int, senders: int, spans_per_request: int, prefix: str = "bench"
) -> tuple[list[list[bytes]], int]:
    """``sessions`` fresh copies of the sample sessions, merged into requests of about
    ``spans_per_request`` spans and dealt to ``senders`` shares; and the span total."""
    shares, total = _counted_payloads(sessions, senders, spans_per_request, prefix)
    return [[body for body, _ in share] for share in shares], total


def _counted_payloads(
    sessions: int,
    senders: int,
    spans_per_request: int,
    prefix: str,
    *,
    grouped: bool = False,
    mix: str = "sample",
) -> tuple[list[list[tuple[bytes, int]]], int]:
    """As :func:`_payloads`; ``grouped``: each request shaped as an SDK exporter or a
    Collector batch sends it (one ``resource_spans`` per resource, one ``scope_spans``
    per scope), not one of each per merged sample line; ``mix``: copies of the samples,
    or ``unique`` sessions whose texts never repeat (:mod:`bench.serve.workload`)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from bench.serve.workload import MIXES

    shares: list[list[tuple[bytes, int]]] = [[] for _ in range(senders)]
    pending = [(ExportTraceServiceRequest(), 0) for _ in range(senders)]
    total_spans = 0
    for i, (_, requests) in enumerate(MIXES[mix](sessions, prefix=prefix)):
        share = shares[i % senders]
        merged, n = pending[i % senders]
        for body in requests:
            part = ExportTraceServiceRequest.FromString(body)
            merged.MergeFrom(part)
            n += sum(len(ss.spans) for rs in part.resource_spans for ss in rs.scope_spans)
            if n >= spans_per_request:
                share.append((_encoded(merged, grouped), n))
                total_spans += n
                merged, n = ExportTraceServiceRequest(), 0
        pending[i % senders] = (merged, n)
    for share, (merged, n) in zip(shares, pending, strict=True):
        if n:
            share.append((_encoded(merged, grouped), n))
            total_spans += n
    return shares, total_spans


def _encoded(request: Any, grouped: bool) -> bytes:
    if not grouped:
        return bytes(request.SerializeToString())
    out = type(request)()
    groups: dict[tuple[bytes, bytes], Any] = {}
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            key = (rs.resource.SerializeToString(), ss.scope.SerializeToString())
            if key not in groups:
                into = next(
                    (r for r in out.resource_spans if r.resource == rs.resource), None
                ) or out.resource_spans.add(resource=rs.resource, schema_url=rs.schema_url)
                groups[key] = into.scope_spans.add(scope=ss.scope, schema_url=ss.schema_url)
            groups[key].spans.extend(ss.spans)
    return bytes(out.SerializeToString())


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _family(pid: int) -> dict[int, tuple[float, float]]:
    """``{pid: (RSS MB, CPU seconds)}`` of the server and every live descendant (its
    forkserver and evaluation workers)."""
    parent: dict[int, int] = {}
    usage: dict[int, tuple[float, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parent[int(entry.name)] = int(stat[1])
        rss_mb = int(stat[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        usage[int(entry.name)] = (rss_mb, (int(stat[11]) + int(stat[12])) / tick)

    def ours(p: int) -> bool:
        for _ in range(10):
            if p == pid:
                return True
            if p <= 1:
                return False
            p = parent.get(p, 0)
        return False

    return {p: u for p, u in usage.items() if ours(p)}


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds so far: the server process, and its descendants (the pool)."""
    family = _family(pid)
    own = family.get(pid, (0.0, 0.0))[1]
    return own, sum(cpu for p, (_, cpu) in family.items() if p != pid)


def _query(spool: Path, sql: str) -> tuple[int, int]:
    with sqlite3.connect(spool, timeout=30) as conn:
        row = conn.execute(sql).fetchone()
    return int(row[0]), int(row[1] or 0)


def _spooled(spool: Path) -> int:
    """Spans waiting in the spool: decoded rows, plus those of requests spooled as they
    came while evaluation was paused (a server before that has no ``requests`` table)."""
    spans = _query(spool, "SELECT count(*), 0 FROM spans")[0]
    with sqlite3.connect(spool, timeout=30) as conn:
        has_raw = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'requests'"
        ).fetchone()
    return spans + (
        _query(spool, "SELECT coalesce(sum(spans), 0), 0 FROM requests")[0] if has_raw else 0
    )


_SETTLED_SECONDS = 10.0
_WAITING = "SELECT count(*), 0 FROM outbox WHERE delivered_at IS NULL"


def _evaluated(spool: Path) -> tuple[int, int]:
    return _query(spool, "SELECT count(*), sum(spans) FROM done_sessions")


def export_revision(rev: str) -> Path:
    """The tree of git revision ``rev`` in a temporary directory (a baseline server)."""
    out = Path(tempfile.mkdtemp(prefix="aem-bench-baseline-"))
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, check=True, capture_output=True
    ).stdout
    tar_path = out / "tree.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(out, filter="data")
    tar_path.unlink()
    return out


def _server_flags(root: Path, args: argparse.Namespace) -> list[str]:
    settings = (root / "aem" / "serve" / "settings.py").read_text()
    flags = [
        "--session-idle-seconds",
        str(args.idle),
        "--spool-synchronous",
        args.synchronous,
        "--retry-after-seconds",
        "0.1",
        "--log-level",
        "WARNING",
    ]
    if args.workers is not None and "workers: int" in settings:
        flags += ["--workers", str(args.workers)]
    if args.pause_evaluation:
        if "spool_only" in settings:
            flags += ["--spool-only", "true"]
        else:  # an older server: no session completes during the run, none is evicted
            flags[1] = "3600"
            flags += ["--max-bytes-in-flight", str(8 * GiB), "--max-spans-in-flight", "10000000"]
            flags += ["--ingest-queue-spans", "200000", "--drain-open-sessions", "false"]
    return flags + list(args.server_arg)


def _start(root: Path, work: Path, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    log = (work / "serve.log").open("wb")
    cmd = serve_command(work / "spool.sqlite", work / "ports.json", work / "verdicts.jsonl")
    cmd += _server_flags(root, args)
    env = serve_environment(root)
    serve = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=log, env=env)
    while not (work / "ports.json").exists():
        if serve.poll() is not None:
            raise SystemExit(f"serve exited; see {work / 'serve.log'}")
        time.sleep(0.05)
    return serve


def _sender_main(args: tuple[Any, ...], out: mp.Queue) -> None:
    from bench.serve.load import run_sender

    transport, target, requests, rate, in_flight, start_at = args
    result = run_sender(
        transport, target, requests, rate=rate, in_flight=in_flight, start_at=start_at
    )
    out.put(asdict(result))


def _send(target: str, shares: list[list[tuple[bytes, int]]], args: argparse.Namespace) -> Any:
    total_requests = sum(len(s) for s in shares)
    spans = sum(n for s in shares for _, n in s)
    # requests/s per sender for the target spans/s
    rate = args.rate / (spans / total_requests) / len(shares) if args.rate else 0.0
    start_at = time.time() + 1.0
    out: mp.Queue = mp.Queue()
    procs = [
        mp.Process(
            target=_sender_main,
            args=((args.transport, target, share, rate, args.in_flight, start_at), out),
        )
        for share in shares
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=args.timeout) for _ in procs]
    for p in procs:
        p.join()
    return results


def _quantiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    q = statistics.quantiles(values, n=100) if len(values) >= 2 else values * 99
    return round(q[49] * 1000, 1), round(q[98] * 1000, 1)


def _verdict_delays(jsonl: Path) -> list[float]:
    first_out: dict[str, float] = {}
    completed: dict[str, float] = {}
    if not jsonl.exists():
        return []
    for line in jsonl.read_text().splitlines():
        rec = json.loads(line)
        sid = rec["session_id"]
        first_out[sid] = min(first_out.get(sid, rec["delivered_at"]), rec["delivered_at"])
        completed[sid] = rec["completed_at"]
    return sorted(first_out[s] - completed[s] for s in first_out)


def _wait_end_to_end(work: Path, sessions: int, deadline: float) -> float:
    """Wait until every session is evaluated and its verdicts delivered; the time the last
    verdict was written (``time.time()`` clock).

    "Every session": ``sessions`` done, or — when the server closed some copy in two parts
    (a part idle longer than the session timeout under load) — nearly all done and the
    count still for ``_SETTLED_SECONDS`` (not while the workers start). "Delivered": no
    outbox row waits. Only the spool is polled: counting the JSONL file's sessions cost
    the bench a core, and a session without a turn writes no verdict line, so that count
    could never be reached (the wait then ran into its timeout, and the figure with it)."""
    spool, jsonl = work / "spool.sqlite", work / "verdicts.jsonl"
    last, moved = -1, time.monotonic()
    while time.monotonic() < deadline:
        done = _evaluated(spool)[0]
        if done != last:
            last, moved = done, time.monotonic()
        stalled = done >= 0.95 * sessions and time.monotonic() - moved > _SETTLED_SECONDS
        settled = done >= sessions or stalled
        if settled and not _query(spool, _WAITING)[0]:
            break
        time.sleep(0.25)
    written = [json.loads(line)["delivered_at"] for line in jsonl.read_text().splitlines()]
    return max(written, default=time.time())


def run_once(
    root: Path, shares: list[list[tuple[bytes, int]]], args: argparse.Namespace
) -> dict[str, Any]:
    """One server from ``root``, the whole load, the figures."""
    work = Path(tempfile.mkdtemp(prefix="aem-bench-serve-"))
    serve = _start(root, work, args)
    ports = json.loads((work / "ports.json").read_text())
    target = (
        f"127.0.0.1:{ports['grpc']}"
        if args.transport == "grpc"
        else f"http://127.0.0.1:{ports['http']}/v1/traces"
    )
    pool_rss = 0.0
    cpu_before = _cpu_seconds(serve.pid)
    try:
        results = _send(target, shares, args)
        cpu_accept = _cpu_seconds(serve.pid)
        sent_end = max(r["last_ack"] for r in results)
        first = min(r["first_send"] for r in results)
        end_to_end = None
        if not args.pause_evaluation:
            last_verdict = _wait_end_to_end(work, args.sessions, time.monotonic() + args.timeout)
            end_to_end = last_verdict - first
        rss = _peak_rss_mb(serve.pid)
        pool_rss = sum(mb for p, (mb, _) in _family(serve.pid).items() if p != serve.pid)
        cpu_end = _cpu_seconds(serve.pid)
        spooled = _spooled(work / "spool.sqlite")
        sessions_done, spans_done = _evaluated(work / "spool.sqlite")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(300)
    accepted = sum(r["accepted_spans"] for r in results)
    ack_p50, ack_p99 = _quantiles([x for r in results for x in r["ack_seconds"]])
    out: dict[str, Any] = {
        "accepted_spans": accepted,
        "accept_spans_per_s": round(accepted / max(sent_end - first, 1e-9)),
        "pushed_back": sum(r["pushed_back"] for r in results),
        "dropped": sum(r["dropped"] for r in results),
        "ack_p50_ms": ack_p50,
        "ack_p99_ms": ack_p99,
        # CPU the server spent per accepted span while receiving: robust to other load on
        # the machine, unlike the wall-clock rate (1e6 / it = spans/s on one free core).
        "server_cpu_us_per_span_accepting": round(
            (cpu_accept[0] - cpu_before[0]) / max(accepted, 1) * 1e6, 1
        ),
        "generator_max_behind_s": round(max(r["max_behind_seconds"] for r in results), 2),
        "spooled_spans_at_end": spooled,
        "serve_peak_rss_mb": round(rss, 1),
        "pool_rss_mb": round(pool_rss, 1),
    }
    if end_to_end is not None:
        p50, p99 = _quantiles(_verdict_delays(work / "verdicts.jsonl"))
        out |= {
            "sessions_evaluated": sessions_done,
            "spans_evaluated": spans_done,
            "end_to_end_spans_per_s": round(spans_done / end_to_end),
            "cpu_us_per_span_end_to_end_server": round(
                (cpu_end[0] - cpu_before[0]) / max(spans_done, 1) * 1e6, 1
            ),
            "cpu_us_per_span_end_to_end_pool": round(
                (cpu_end[1] - cpu_before[1]) / max(spans_done, 1) * 1e6, 1
            ),
            "completion_to_verdict_p50_ms": p50,
            "completion_to_verdict_p99_ms": p99,
        }
    return out


def _median(values: list[dict[str, Any]]) -> dict[str, Any]:
    """Per key, the median over the rounds (the figures of a one-round run as they are)."""
    return {
        key: round(statistics.median(v[key] for v in values), 1)
        if all(isinstance(v.get(key), int | float) for v in values)
        else values[0].get(key)
        for key in values[0]
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--senders", type=int, default=2, help="sender processes")
    parser.add_argument("--in-flight", type=int, default=16, help="requests in flight/sender")
    parser.add_argument("--rate", type=float, default=0, help="target spans/s (0: max)")
    parser.add_argument("--transport", choices=["grpc", "http"], default="grpc")
    parser.add_argument("--spans-per-request", type=int, default=64)
    parser.add_argument(
        "--grouped",
        action="store_true",
        help="requests grouped by resource and scope, as SDK exporters send them",
    )
    parser.add_argument("--idle", type=float, default=1.0, help="session idle seconds")
    parser.add_argument("--synchronous", choices=["FULL", "NORMAL"], default="FULL")
    parser.add_argument("--pause-evaluation", action="store_true", help="serve.spool_only")
    parser.add_argument("--workers", type=int, default=None, help="serve.workers")
    parser.add_argument("--baseline", default=None, help="git revision to compare against")
    parser.add_argument("--rounds", type=int, default=1, help="runs per server, medians")
    parser.add_argument("--server-arg", action="append", default=[], help="extra serve flag")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument(
        "--mix",
        default="sample",
        help="sample (copies of the samples: texts repeat), unique (bench/domains sessions: "
        "no text repeats), or both: sample,unique",
    )
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    mixes = [m.strip() for m in args.mix.split(",") if m.strip()]
    payloads = {
        mix: _counted_payloads(
            args.sessions,
            args.senders,
            args.spans_per_request,
            "bench",
            grouped=args.grouped,
            mix=mix,
        )
        for mix in mixes
    }
    roots = {"current": ROOT}
    if args.baseline:
        roots = {"baseline": export_revision(args.baseline), **roots}
    # One column per server and mix ("current" alone for the sample mix, as before).
    names = [(r, m) for m in mixes for r in roots]
    label = {(r, m): r if mixes == ["sample"] else f"{r}/{m}" for r, m in names}
    rounds: dict[str, list[dict[str, Any]]] = {label[n]: [] for n in names}
    for _ in range(args.rounds):  # alternated, so load from elsewhere hits both alike
        for root_name, mix in names:
            run = run_once(roots[root_name], payloads[mix][0], args)
            rounds[label[root_name, mix]].append(run | {"spans_sent": payloads[mix][1]})
    runs = {name: _median(values) for name, values in rounds.items()}
    settings = {k: v for k, v in vars(args).items() if k not in {"timeout"}}
    result: dict[str, Any] = {**settings, "cpus": os.cpu_count(), **runs}
    result["rounds_measured"] = rounds
    _print_and_write(result, runs, rounds, args)
    ok = all(r["dropped"] == 0 for rs in rounds.values() for r in rs)
    if not args.pause_evaluation:
        ok = ok and all(
            r.get("sessions_evaluated") == args.sessions for rs in rounds.values() for r in rs
        )
    return 0 if ok else 1


def _print_and_write(
    result: dict[str, Any],
    runs: dict[str, dict[str, Any]],
    rounds: dict[str, list[dict[str, Any]]],
    args: argparse.Namespace,
) -> None:
    """The table of figures per server and mix, the ratios to a baseline, the JSON file."""
    keys = list(next(iter(runs.values())))
    print(f"{'':<32}" + "".join(f"{name:>16}" for name in runs))
    for key in keys:
        print(f"{key:<32}" + "".join(f"{r.get(key, '')!s:>16}" for r in runs.values()))
    if "baseline" in runs and "current" in runs:
        ratios = {
            key: round(runs["current"][key] / runs["baseline"][key], 2)
            for key in (
                "accept_spans_per_s",
                "server_cpu_us_per_span_accepting",
                "end_to_end_spans_per_s",
                "cpu_us_per_span_end_to_end_server",
                "serve_peak_rss_mb",
            )
            if runs["baseline"].get(key)
        }
        result["ratios"] = ratios
        print("ratios current/baseline:", ratios)
    results_dir = ROOT / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"serve-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"written {path.relative_to(ROOT)}")


if __name__ == "__main__":
    raise SystemExit(main())
