"""``aem audit --workers N`` scaling: sessions/s for 1 and N workers, as a ratio.

Why two workloads: the tau-bench dev data compares text (the embedding model dominates:
each worker loads it once, torch gets a share of the cores), and a generated one — support
conversations of ~32 spans from ``bench.session_size.workload``, each its own session, with
``compare.embed_free_text=false`` and the metrics that always embed disabled — has no
model at all, so what it measures is the pool's own cost (packing, the pipe, the reading
process keeping up). Both rates come from the same run on the same machine, so the ratio
is what counts; each figure is the best of ``--repeat`` timings (the machine is shared:
the load average is printed with them). Run from the repository root::

    python -m bench.workers.run [--repeat 3] [--sessions 200] [--workers 2] [--skip-tau]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.config import AemConfig, load_config
from aem.engines import available_cores
from bench.devdata import dev_set
from bench.session_size.workload import generate, otlp_line

HERE = Path(__file__).resolve()
TAU = dev_set("tau-bench-airline-dev")
# Metrics that embed text whatever compare.embed_free_text says.
_EMBEDDING_METRICS = '["groundedness", "refusal", "correctness.completeness"]'


def generated_sessions(target: Path, sessions: int) -> None:
    """``sessions`` generated conversations, one OTLP line (one trace) each."""
    with target.open("w", encoding="utf-8") as out:
        for number in range(sessions):
            spans = generate(30, session_id=f"generated-{number:05d}", seed=number)
            out.write(otlp_line(spans) + "\n")


def _first_lines(source: Path, target: Path, lines: int | None) -> Path:
    """``source`` itself, or its first ``lines`` lines (one tau-bench session each)."""
    if lines is None:
        return source
    with source.open("rb") as full, target.open("wb") as out:
        for _, line in zip(range(lines), full, strict=False):
            out.write(line)
    return target


def _cpu_seconds() -> dict[tuple[int, int], float]:
    """CPU seconds (user + system) so far of this process and each of its descendants,
    by ``(pid, 0)``, and of each of their threads, by ``(pid, thread id)``."""
    parents: dict[int, int] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
    mine = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        grew = bool(found)
        mine |= found
    times: dict[tuple[int, int], float] = {}
    for pid in mine:
        stats = [(0, Path(f"/proc/{pid}/stat"))]
        with contextlib.suppress(OSError):
            stats += [(int(t.name), t / "stat") for t in Path(f"/proc/{pid}/task").iterdir()]
        for tid, stat in stats:
            with contextlib.suppress(OSError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                times[(pid, tid)] = (int(fields[11]) + int(fields[12])) / tick
    return times


def _busiest(before: dict[tuple[int, int], float], after: dict[tuple[int, int], float]) -> float:
    """CPU seconds of the thread that worked most between two readings: a process whose
    work torch spreads over threads may finish in less wall time than its CPU seconds."""
    return max(cpu - before.get(key, 0.0) for key, cpu in after.items() if key[1])


def _split(
    before: dict[tuple[int, int], float], after: dict[tuple[int, int], float]
) -> tuple[float, float]:
    """CPU seconds between two readings of this (the reading) process, and of all others
    (the workers, the forkserver)."""
    me = (os.getpid(), 0)
    others = sum(
        cpu - before.get(key, 0.0) for key, cpu in after.items() if key != me and not key[1]
    )
    return after[me] - before[me], others


def idle_bound(reader: float, workers: float, busiest: float) -> float:
    """Least wall seconds the run could take on idle cores: no thread finishes before its
    own CPU seconds, and all processes share ``available_cores()`` cores."""
    return max(busiest, (reader + workers) / available_cores())


def measure(
    name: str,
    paths: list[str],
    counts: list[int],
    repeat: int,
    config: AemConfig,
    cases: dict | None,
) -> None:
    """One workload: a line per worker count, best of ``repeat``, the ratio against the
    first count. Counts alternate within each round, so a change of load between rounds
    hits every count alike (the first round also pays each pool's start).

    Besides wall time, CPU seconds: this kernel shares CPU between sessions (autogroup),
    so on a machine loaded by others more processes get no more CPU, and the wall ratio
    cannot show the parallelism. From the reading process's CPU seconds, the workers'
    and the busiest thread's, :func:`idle_bound` gives the least wall time the run could
    take on idle cores; the ``idle`` ratio is the first count's bound over this one's —
    the speed-up those runs reach on idle cores, the pool's extra CPU (packing, the pipe,
    three processes on two cores) included."""
    runs: dict[int, list[tuple[float, float, float, float]]] = {count: [] for count in counts}
    sessions = 0
    for _ in range(repeat):
        for workers in counts:
            before = _cpu_seconds()
            start = time.perf_counter()
            report = audit_paths(paths, cases=cases, config=config, workers=workers)
            wall = time.perf_counter() - start
            after = _cpu_seconds()
            reader, others = _split(before, after)
            runs[workers].append((wall, reader, others, _busiest(before, after)))
            sessions = len(report.sessions)
    base_wall = min(r[0] for r in runs[counts[0]])
    base_bound = min(idle_bound(*r[1:]) for r in runs[counts[0]])
    for workers in counts:
        wall = min(r[0] for r in runs[workers])
        best = min(runs[workers], key=lambda r: idle_bound(*r[1:]))
        bound = idle_bound(*best[1:])
        spread = ", ".join(f"{r[0]:.1f}" for r in runs[workers])
        print(
            f"{name:<20} workers={workers}  {sessions:>4} sessions  {sessions / wall:6.2f} "
            f"sessions/s wall x{base_wall / wall:.2f}  CPU s: reader {best[1]:.1f}, workers "
            f"{best[2]:.1f}, busiest thread {best[3]:.1f}; idle-core bound {bound:.1f} s = "
            f"{sessions / bound:.2f} sessions/s, idle x{base_bound / bound:.2f}"
            f"  (wall s: {spread}; load now {os.getloadavg()[0]:.1f})",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timings per figure (best kept)")
    parser.add_argument("--sessions", type=int, default=200, help="generated sessions (0: none)")
    parser.add_argument("--workers", type=int, default=2, help="compared with 1 worker")
    parser.add_argument("--skip-tau", action="store_true", help="only the generated workload")
    parser.add_argument("--tau-repeat", type=int, default=None, help="--repeat for tau-bench")
    parser.add_argument(
        "--tau-sessions", type=int, default=None, help="only the first tau-bench sessions"
    )
    args = parser.parse_args()
    source = TAU / "traces.otlp.jsonl"
    if not args.skip_tau and not source.exists():
        print(f"needs the tau-bench dev data at {TAU} (or --skip-tau)", file=sys.stderr)
        return 2
    counts = [1, args.workers]
    print(
        f"cores: {available_cores()}, load average: {os.getloadavg()[0]:.1f}, best of {args.repeat}"
    )
    if args.sessions:  # --sessions 0: only tau-bench
        with tempfile.TemporaryDirectory() as tmp:
            generated = Path(tmp) / "generated.otlp.jsonl"
            generated_sessions(generated, args.sessions)
            no_text = load_config(
                None, ["compare.embed_free_text=false", f"metrics.disabled={_EMBEDDING_METRICS}"]
            )
            measure("generated, no text", [str(generated)], counts, args.repeat, no_text, None)
        # The single-process runs above ran here: the model must not have been needed.
        imported = "sentence_transformers" in sys.modules
        print(f"embedding model imported by the generated load: {imported}")
    if not args.skip_tau:
        cases = load_cases(TAU / "references.jsonl")
        with tempfile.TemporaryDirectory() as tmp:
            tau = _first_lines(source, Path(tmp) / "tau.otlp.jsonl", args.tau_sessions)
            repeat = args.tau_repeat or args.repeat
            measure("tau-bench dev", [str(tau)], counts, repeat, AemConfig(), cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
