"""What one realistic tool-calling session costs, and whether the default worker pool helps.

Run: ``python -m bench.session_cost.run [--sessions 25] [--rounds 3] [--pool 25,2000]
[--tau-pool 25,80] [--no-audit-path]``

Sessions: :mod:`bench.domains` — an agent of one of 12 businesses in one of 4 languages
verifies the member, looks the record up and tells the user what it says, each chat span
carrying the message history so far, recorded with the real OpenTelemetry SDK; every
session has its own values (dates, amounts, references, people), so no text repeats across
sessions and the embedding cache cannot flatter the figure. The cases file a team would
write goes with them (facts and a key point), so the case-bound metrics run too.

Three figures, each in the same run:

* **In process** (every metric, defaults, one :class:`aem.evaluate.Evaluator` for the
  run as ``aem audit`` has): CPU seconds per session and per span, and the share of it
  spent in the encoder (the time inside ``TextEmbedder.encode_uncached``), texts encoded
  per session. Medians over ``--rounds``.
* **The audit path**: ``aem audit --workers 1`` over the sessions, a one-session audit's
  CPU subtracted (start-up, imports, the model load), per session.
* **The pool** (``--pool``, sizes in sessions): wall seconds of ``aem audit --workers 1``
  and of ``aem audit`` with the default workers, alternated, best of ``--rounds``; the
  ratio default / one process (≤ 1.1 is the bar for small audits, and lower is better);
  ``--tau-pool`` the same on the first N tau-bench development sessions, which compare
  text at length (``AEM_DEV_DATA``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from aem.cases import load_cases  # noqa: E402
from aem.config import load_config  # noqa: E402
from aem.evaluate import Evaluator  # noqa: E402
from bench.domains.catalog import DOMAINS, LANGUAGES  # noqa: E402
from bench.domains.generate import VARIANTS, natural_case, record_session  # noqa: E402
from bench.embeddings.run import write_report  # noqa: E402
from scripts.generate_sample_traces import write_lines  # noqa: E402


def write_sessions(folder: Path, count: int) -> tuple[Path, Path, int]:
    """``count`` distinct sessions (domains, languages and variants in turn, then the next
    number) as ``traces.otlp.jsonl`` and ``cases.jsonl``; (traces, cases, spans)."""
    import json

    lines: list[str] = []
    cases: list[str] = []
    combos = (
        (n, *combo)
        for n in itertools.count()
        for combo in itertools.product(DOMAINS, LANGUAGES, VARIANTS)
    )
    for n, domain, language, variant in itertools.islice(combos, count):
        recorded, _ = record_session(domain, language, variant, n)
        lines += recorded
        case = natural_case(domain, language, variant, n)
        cases.append(json.dumps(case, ensure_ascii=False))
    folder.mkdir(parents=True, exist_ok=True)
    traces, cases_path = folder / "traces.otlp.jsonl", folder / "cases.jsonl"
    write_lines(traces, lines)
    cases_path.write_text("".join(c + "\n" for c in cases), encoding="utf-8")
    spans = sum(
        len(scope.get("spans", []))
        for line in lines
        for resource_spans in json.loads(line).get("resourceSpans", [])
        for scope in resource_spans.get("scopeSpans", [])
    )
    return traces, cases_path, spans


class _EncodeClock:
    """CPU seconds spent inside the embedder's model calls (all threads of the process)."""

    def __init__(self, embedder: Any) -> None:
        self.cpu = 0.0
        self._inner = embedder.encode_uncached
        embedder.encode_uncached = self

    def __call__(self, texts: Sequence[str]) -> Any:
        start = time.process_time()
        try:
            return self._inner(texts)
        finally:
            self.cpu += time.process_time() - start


def in_process(traces: Path, cases_path: Path) -> dict[str, Any]:
    """One fresh evaluator over every session: CPU, encoder CPU, texts encoded."""
    from collectors.reading import SessionReading

    config = load_config(None, [])
    cases = load_cases(cases_path)
    closed = [
        s for batch in SessionReading(config.assembly, []).files([str(traces)]) for s in batch
    ]
    evaluator = Evaluator(config, cases)
    embedder = evaluator.comparator().embedder
    embedder.encode_uncached(["load the model outside the timer"])
    loaded = embedder.texts_encoded
    clock = _EncodeClock(embedder)
    start = time.process_time()
    for session in closed:
        evaluator.evaluate(session)
    cpu = time.process_time() - start
    return {
        "sessions": len(closed),
        "cpu": cpu,
        "encode_cpu": clock.cpu,
        "texts_encoded": embedder.texts_encoded - loaded,
    }


def _audit_command(cases_path: Path, store: Path, workers: int | None) -> list[str]:
    command = [sys.executable, "-m", "aem.cli", "audit", "--summary", "--no-progress"]
    command += ["--cases", str(cases_path), "--store", str(store)]
    return command + (["--workers", str(workers)] if workers is not None else [])


def _run(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child and its own children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ}
    env.pop("AEM_WORKERS", None)
    done = subprocess.run(command, capture_output=True, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"aem audit exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def audit_path(folder: Path, traces: Path, cases_path: Path, count: int) -> float:
    """CPU seconds per session of ``aem audit --workers 1``, a one-session audit's CPU
    (start-up, imports, the model load) subtracted."""
    one, _, _ = write_sessions(folder / "one", 1)
    _, warm = _run([*_audit_command(cases_path, folder / "w.sqlite", 1), str(one)])
    _, full = _run([*_audit_command(cases_path, folder / "f.sqlite", 1), str(traces)])
    return (full - warm) / max(1, count - 1)


def tau_sessions(folder: Path, count: int) -> tuple[Path, Path, int]:
    """The first ``count`` tau-bench airline development sessions (one a line) and their
    references: sessions that compare text at length (about 0.2 CPU s each)."""
    from bench.devdata import dev_set

    source = dev_set("tau-bench-airline-dev")
    folder.mkdir(parents=True, exist_ok=True)
    traces = folder / "traces.otlp.jsonl"
    with (source / "traces.otlp.jsonl").open("rb") as full, traces.open("wb") as out:
        for _, line in zip(range(count), full, strict=False):
            out.write(line)
    return traces, source / "references.jsonl", 0


def pool(folder: Path, size: int, rounds: int, tau: bool = False) -> dict[str, float]:
    """Wall seconds of ``--workers 1`` and of the default workers on ``size`` sessions,
    alternated, best of ``rounds``."""
    make = tau_sessions if tau else write_sessions
    traces, cases_path, spans = make(folder / f"pool-{size}-{tau}", size)
    walls: dict[str, list[float]] = {"one": [], "default": []}
    cpus: dict[str, list[float]] = {"one": [], "default": []}
    for round_number in range(rounds):
        for name, workers in (("one", 1), ("default", None)):
            store = folder / f"pool-{size}-{name}-{round_number}.sqlite"
            wall, cpu = _run([*_audit_command(cases_path, store, workers), str(traces)])
            walls[name].append(wall)
            cpus[name].append(cpu)
    one, default = min(walls["one"]), min(walls["default"])
    return {
        "workload": "tau-bench" if tau else "domains",
        "sessions": size,
        "spans": spans,
        "one_wall_s": one,
        "default_wall_s": default,
        "one_cpu_s": min(cpus["one"]),
        "default_cpu_s": min(cpus["default"]),
        "ratio_default_over_one": default / one,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool", default="25", help="comma-separated audit sizes; '' = none")
    parser.add_argument(
        "--tau-pool", default="", help="audit sizes of tau-bench dev sessions (AEM_DEV_DATA)"
    )
    parser.add_argument("--no-audit-path", dest="audit_path", action="store_false")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="aem-session-cost-") as tmp:
        folder = Path(tmp)
        traces, cases_path, spans = write_sessions(folder / "main", args.sessions)
        runs = [in_process(traces, cases_path) for _ in range(args.rounds)]
        cpu = statistics.median(r["cpu"] for r in runs)
        encode = statistics.median(r["encode_cpu"] for r in runs)
        sessions = int(runs[0]["sessions"])
        report["in_process"] = {
            "sessions": sessions,
            "spans": spans,
            "cpu_s_per_session": cpu / sessions,
            "cpu_ms_per_span": 1000 * cpu / spans,
            "encode_share": encode / cpu if cpu else 0.0,
            "texts_encoded_per_session": runs[0]["texts_encoded"] / sessions,
        }
        f = report["in_process"]
        print(
            f"in process: {sessions} sessions, {spans} spans: {f['cpu_s_per_session']:.3f} "
            f"CPU s/session, {f['cpu_ms_per_span']:.1f} ms/span, encoder "
            f"{100 * f['encode_share']:.0f} %, {f['texts_encoded_per_session']:.1f} texts "
            "encoded/session"
        )
        if args.audit_path:
            per_session = audit_path(folder, traces, cases_path, sessions)
            report["audit_cpu_s_per_session"] = per_session
            print(
                f"aem audit --workers 1 (a one-session audit subtracted): "
                f"{per_session:.3f} CPU s/session, {per_session / (spans / sessions):.4f} per span"
            )
        report["pool"] = []
        sizes = [(int(s), False) for s in args.pool.split(",") if s.strip()]
        sizes += [(int(s), True) for s in args.tau_pool.split(",") if s.strip()]
        for size, tau in sizes:
            p = pool(folder, size, args.rounds, tau)
            report["pool"].append(p)
            print(
                f"pool, {size} {p['workload']} sessions: --workers 1 {p['one_wall_s']:.2f} s "
                f"wall ({p['one_cpu_s']:.2f} CPU s), default {p['default_wall_s']:.2f} s "
                f"({p['default_cpu_s']:.2f} CPU s): {p['ratio_default_over_one']:.2f}x"
            )
    write_report("session-cost", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
