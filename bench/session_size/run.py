"""How evaluation time grows with one session's length, and what a 1 M-span trace costs.

    python -m bench.session_size.run [--sizes 1000,10000,100000] [--repeat 3]
        [--baseline REV --baseline-sizes 1000,4000] [--million] [--full-history 500,1000,2000]

Times, for one generated session per size (``workload``: model inputs carry a window of
the conversation, tool calls have ids, arguments reuse values from results): turn
building, the turn graph, and evaluation with the case-free metrics minus those that
embed text (``groundedness``, ``refusal``, ``correctness.completeness``: their cost is
the embedding model's, measured by ``bench/embeddings``). ``correctness.truthfulness``
is in: its value support looks values up in an index (``aem.evidence.support.ValueIndex``)
since issue 14. Prints each stage's time (best of ``--repeat``) and the process CPU
seconds beside the wall total (on a shared machine wall time measures the neighbours
too), the process's peak RSS after each size, and the growth exponent, the
least-squares slope of log time over log spans.

``--baseline REV`` times the same workload on the code of a git revision (extracted with
``git archive``, run in a subprocess) in the same run, so speed-ups are ratios measured
side by side. ``--million`` audits a one-trace session of 1 M spans through the
assembler with its span limit and reports time, peak RSS and the cut. ``--full-history``
times inputs that carry the whole conversation: their bytes grow quadratically, and the
bench says how the time follows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from inspect import signature
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# Metrics that embed text: the model's cost, not the session's structure.
EMBEDDING_METRICS = ["groundedness", "refusal", "correctness.completeness"]
NO_EMBEDDING = {"metrics": {"disabled": EMBEDDING_METRICS}}


def time_session(
    spans: int, repeat: int, window: int | None, config: dict[str, Any]
) -> dict[str, Any]:
    """Best-of-``repeat`` seconds for build, graph and evaluation of one session."""
    from aem.config import AemConfig
    from aem.evaluate import Evaluator
    from aem.foundation.model import ClosedSession
    from aem.graph import build_turn_graph
    from bench.session_size.workload import generate
    from collectors.sessions import build_session

    records = generate(spans, window=window)
    # Time the whole session, not the turn limit (older revisions have no limit).
    unlimited = {"max_turns": None} if "max_turns" in signature(build_session).parameters else {}
    input_bytes = sum(len(s.attributes.get("gen_ai.input.messages", "")) for s in records)
    evaluator = Evaluator(AemConfig(), metrics=installed_metrics(config["metrics"]["disabled"]))
    best = {"build": math.inf, "graph": math.inf, "evaluate": math.inf, "cpu": math.inf}
    turns = edges = 0
    for _ in range(repeat):
        closed = ClosedSession("long-session", "gen_ai.conversation.id", False, list(records))
        c0 = time.process_time()
        t0 = time.perf_counter()
        session = build_session(closed, **unlimited)
        t1 = time.perf_counter()
        # Timed alone; the evaluation builds its own too, at every revision ("evaluate"
        # includes one graph build since the session stopped holding its graph).
        graph = build_turn_graph(session.turns)
        t2 = time.perf_counter()
        evaluator.evaluate(session)
        t3 = time.perf_counter()
        best["cpu"] = min(best["cpu"], time.process_time() - c0)
        for stage, seconds in (("build", t1 - t0), ("graph", t2 - t1), ("evaluate", t3 - t2)):
            best[stage] = min(best[stage], seconds)
        # A TurnGraph now; a networkx graph on older baselines.
        turns, edges = len(session.turns), len(graph.edges)
    total = best["build"] + best["graph"] + best["evaluate"]
    return {
        "spans": len(records),
        "turns": turns,
        "edges": edges,
        "input_bytes": input_bytes,
        **best,
        "total": total,
        # The process's peak so far: sizes run smallest first, so it is this size's.
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def installed_metrics(disabled: list[str]) -> list[Any]:
    """The registered metrics this tree has the code of, minus ``disabled``, with their
    default settings. Why not ``resolve_metrics``: the entry points are the installed
    work tree's, which may name metrics a timed revision does not have yet."""
    from importlib.metadata import entry_points

    from aem.foundation import plugins

    found = []
    for entry in entry_points(group=plugins.METRIC.group):
        try:
            found.append(
                plugins.checked(plugins.METRIC, entry.load(), entry.name, entry.module, "")
            )
        except ImportError:
            continue
    # Named bands order them; a revision from before the bands, its precedence numbers.
    rank = getattr(plugins.METRIC, "rank", lambda t: getattr(t, "precedence", 100))
    found.sort(key=lambda p: rank(p.target))
    return [p.build(p.settings({})) for p in found if p.name not in disabled]


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log y over log x: the growth exponent."""
    logs = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(logs) < 2:
        return math.nan
    mx = sum(x for x, _ in logs) / len(logs)
    my = sum(y for _, y in logs) / len(logs)
    num = sum((x - mx) * (y - my) for x, y in logs)
    den = sum((x - mx) ** 2 for x, _ in logs)
    return num / den


def _child(args: list[str], root: Path) -> list[dict[str, Any]]:
    """Run ``--child`` timings with ``root`` first on the import path; parse JSON lines."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{root}",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    out = subprocess.run(
        [sys.executable, "-m", "bench.session_size.run", "--child", *args],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def baseline(rev: str, sizes: list[int], repeat: int, repo: Path = REPO) -> list[dict[str, Any]]:
    """The same timings on revision ``rev``'s code in ``repo`` (this bench copied in)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "archive", rev], cwd=repo, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        target = Path(tmp) / "bench" / "session_size"
        target.mkdir(parents=True, exist_ok=True)
        for name in ("__init__.py", "workload.py", "run.py"):
            (target / name).write_bytes((HERE / name).read_bytes())
        return _child(["--sizes", ",".join(map(str, sizes)), "--repeat", str(repeat)], Path(tmp))


def million(spans: int) -> dict[str, Any]:
    """A one-trace session of ``spans`` spans through the assembler (its span limit) and
    the evaluator, as ``aem audit`` runs them: seconds, peak RSS, the cut issue."""
    from aem.config import AemConfig
    from aem.evaluate import Evaluator
    from aem.foundation.model import SessionReport
    from bench.session_size.workload import iter_spans
    from collectors.assembler import SessionAssembler

    config = AemConfig()
    evaluator = Evaluator(config, metrics=installed_metrics(EMBEDDING_METRICS))
    assembler = SessionAssembler(idle=20_000, max_session_spans=config.assembly.span_limit)
    start, cpu = time.perf_counter(), time.process_time()
    reports: list[SessionReport] = []
    for clock, span in enumerate(iter_spans(spans, one_trace=True), start=1):
        assembler.add(span, clock)
        if clock % 2_000 == 0:
            reports.extend(evaluator.evaluate(s) for s in assembler.pop_complete(clock))
    reports.extend(evaluator.evaluate(s) for s in assembler.drain())
    seconds = time.perf_counter() - start
    cut = [i.message for r in reports for i in r.issues if i.kind == "session_cut"]
    return {
        "spans": clock,
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "sessions": len(reports),
        "cut": [r.cut for r in reports],
        "reason": cut,
        "turns": sum(len(r.turns) for r in reports),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(title)
    print(
        f"{'spans':>8} {'turns':>7} {'edges':>7} {'MB in':>8} {'build s':>8} {'graph s':>8}"
        f" {'eval s':>8} {'total s':>8} {'CPU s':>8} {'peak MB':>8}"
    )
    for r in rows:
        print(
            f"{r['spans']:>8} {r['turns']:>7} {r['edges']:>7} {r['input_bytes'] / 1e6:>8.1f}"
            f" {r['build']:>8.3f} {r['graph']:>8.3f} {r['evaluate']:>8.3f} {r['total']:>8.3f}"
            f" {r.get('cpu', math.nan):>8.3f} {r.get('peak_rss_mb', math.nan):>8.0f}"
        )
    for stage in ("build", "graph", "evaluate", "total", "cpu"):
        print(f"  exponent {stage:<8} {slope([(r['spans'], r[stage]) for r in rows]):.2f}")


def main(argv: list[str] | None = None) -> None:
    """Parse options, run the timings asked for, print tables and ratios."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="git revision to compare with")
    parser.add_argument("--baseline-sizes", default="1000,4000")
    parser.add_argument("--repo", type=Path, default=REPO, help="git work tree of --baseline")
    parser.add_argument("--million", action="store_true")
    parser.add_argument("--full-history", default="", help="sizes with whole-history inputs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.child:
        for size in sizes:
            print(json.dumps(time_session(size, args.repeat, 24, NO_EMBEDDING)), flush=True)
        return
    rows = [
        time_session(size, args.repeat if size <= 10_000 else 1, 24, NO_EMBEDDING) for size in sizes
    ]
    _print_table(f"windowed inputs (24 messages), best of {args.repeat} (1 above 10 k)", rows)
    if args.baseline:
        base_sizes = [int(s) for s in args.baseline_sizes.split(",") if s]
        old = baseline(args.baseline, base_sizes, args.repeat, args.repo)
        new = [time_session(size, args.repeat, 24, NO_EMBEDDING) for size in base_sizes]
        _print_table(f"baseline {args.baseline}, same workload", old)
        for o, n in zip(old, new, strict=True):
            print(
                f"  {n['spans']} spans: baseline {o['total']:.3f} s / now {n['total']:.3f} s"
                f" = {o['total'] / n['total']:.1f}x"
            )
    if args.full_history:
        full = [
            time_session(int(s), args.repeat, None, NO_EMBEDDING)
            for s in args.full_history.split(",")
        ]
        _print_table("whole-history inputs (bytes grow quadratically)", full)
        print(
            f"  exponent of input bytes {slope([(r['spans'], r['input_bytes']) for r in full]):.2f}"
        )
    if args.million:
        print("1 M-span trace:", json.dumps(million(1_000_000)))


if __name__ == "__main__":
    main()
