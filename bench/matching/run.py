"""Tool-set matching: µs per trajectory and per-category verdicts, AEM beside its peers.

Run: ``python -m bench.matching.run [--per-category N] [--reps R]``

Peers run in the same process on the same workload when importable (agentevals
``unordered`` with ``superset`` arguments — the mode that allows extra arguments like
AEM's default — and deepeval ``ToolCorrectnessMetric``, names only and with arguments).
Network is never needed: tracing and telemetry are switched off before the imports, and
deepeval gets a dummy key (its deterministic metric never calls the model).
Inputs are converted to each library's own format *before* timing; only the matcher is
timed. Results go to ``bench/results/matching-*.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

for key, value in {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "sk-dummy-not-used"),
    "HF_HUB_OFFLINE": "1",
}.items():
    os.environ.setdefault(key, value)

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from aem.matching import ActualCall, match_tool_calls  # noqa: E402
from bench.matching.workload import CATEGORIES, Trajectory, generate  # noqa: E402

Prepared = Callable[[], bool]  # runs the matcher on pre-built input, returns the verdict


def aem_runner(t: Trajectory) -> Prepared:
    actual = [ActualCall(c["name"], c["arguments"]) for c in t.actual]
    expected, order = t.expected, t.order
    return lambda: match_tool_calls(expected, actual, order=order).passed


def agentevals_factory() -> Callable[[Trajectory], Prepared] | None:
    try:
        from agentevals.trajectory.match import create_trajectory_match_evaluator
    except Exception as exc:  # not installed, or broken by its dependencies
        print(f"agentevals unavailable: {exc}")
        return None
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode="unordered", tool_args_match_mode="superset"
    )

    def messages(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "do it"}] + [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "function": {
                            "name": c["name"],
                            "arguments": json.dumps(c["arguments"]),
                        }
                    }
                ],
            }
            for c in calls
        ]

    def runner(t: Trajectory) -> Prepared:
        outputs, reference = messages(t.actual), messages(t.expected)
        return lambda: bool(evaluator(outputs=outputs, reference_outputs=reference)["score"])

    return runner


def deepeval_factory(with_arguments: bool) -> Callable[[Trajectory], Prepared] | None:
    try:
        from deepeval.metrics import ToolCorrectnessMetric
        from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams
    except Exception as exc:
        print(f"deepeval unavailable: {exc}")
        return None
    params = [ToolCallParams.INPUT_PARAMETERS] if with_arguments else []
    metric = ToolCorrectnessMetric(evaluation_params=params, async_mode=False, include_reason=False)

    def runner(t: Trajectory) -> Prepared:
        case = LLMTestCase(
            input="do it",
            actual_output="done",
            tools_called=[
                ToolCall(name=c["name"], input_parameters=c["arguments"]) for c in t.actual
            ],
            expected_tools=[
                ToolCall(name=c["name"], input_parameters=c["arguments"]) for c in t.expected
            ],
        )

        def run() -> bool:
            metric.measure(case)
            return bool(metric.is_successful())

        return run

    return runner


def measure(
    name: str, factory: Callable[[Trajectory], Prepared], workload: list[Trajectory], reps: int
) -> dict[str, Any]:
    """Median µs per trajectory (mean of ``reps`` runs each) and verdicts per category.

    The µs are CPU time of this process (the matchers are single-threaded): on a shared
    machine, wall time also counts the time other processes held the core — measured
    under a load of 14 on 2 cores, wall time was 7x CPU time for 100 µs trajectories.
    The wall-clock median is reported beside it.
    """
    prepared = [factory(t) for t in workload]
    verdicts = [run() for run in prepared]  # warm-up, and the verdicts themselves
    per_traj: list[float] = []
    wall: list[float] = []
    per_cat: dict[str, list[float]] = defaultdict(list)
    gc.collect()
    for t, run in zip(workload, prepared, strict=True):
        start, start_wall = time.process_time_ns(), time.perf_counter_ns()
        for _ in range(reps):
            run()
        us = (time.process_time_ns() - start) / reps / 1000
        wall.append((time.perf_counter_ns() - start_wall) / reps / 1000)
        per_traj.append(us)
        per_cat[t.category].append(us)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for t, verdict in zip(workload, verdicts, strict=True):
        total[t.category] += 1
        right[t.category] += verdict == t.should_pass
    return {
        "name": name,
        "median_us": statistics.median(per_traj),
        "median_wall_us": statistics.median(wall),
        "p90_us": statistics.quantiles(per_traj, n=10)[-1],
        "median_us_by_category": {c: statistics.median(v) for c, v in per_cat.items()},
        "right_by_category": {c: right[c] / total[c] for c in CATEGORIES},
        "right_overall": sum(right.values()) / sum(total.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--per-category", type=int, default=100)
    parser.add_argument("--reps", type=int, default=20, help="runs per trajectory for AEM")
    parser.add_argument("--peer-reps", type=int, default=3, help="runs per trajectory, peers")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args(argv)

    workload = list(generate(args.per_category, seed=args.seed))
    sizes = [len(t.expected) for t in workload]
    print(
        f"workload: {len(workload)} trajectories, {len(CATEGORIES)} categories, "
        f"{min(sizes)}-{max(sizes)} expected calls (mean {statistics.mean(sizes):.1f})"
    )
    results = [measure("aem", aem_runner, workload, args.reps)]
    if not args.no_peers:
        peers: list[tuple[str, Callable[[Trajectory], Prepared] | None]] = [
            ("agentevals unordered/superset", agentevals_factory()),
            ("deepeval ToolCorrectness (names)", deepeval_factory(False)),
            ("deepeval ToolCorrectness (+args)", deepeval_factory(True)),
        ]
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)  # deepeval may write its cache files into the cwd
            try:
                for name, factory in peers:
                    if factory is not None:
                        results.append(measure(name, factory, workload, args.peer_reps))
            finally:
                os.chdir(cwd)

    render(results)
    out_dir = REPO / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"matching-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(
        json.dumps(
            {
                "workload": {
                    "per_category": args.per_category,
                    "seed": args.seed,
                    "trajectories": len(workload),
                },
                "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
                "results": results,
            },
            indent=2,
        )
    )
    print(f"\nwritten {out.relative_to(REPO)}")
    return 0


def render(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    speed = Table(title="CPU µs per trajectory (median; p90; wall-clock median)")
    speed.add_column("matcher")
    speed.add_column("median µs", justify="right")
    speed.add_column("wall µs", justify="right")
    speed.add_column("p90 µs", justify="right")
    speed.add_column("right overall", justify="right")
    for r in results:
        speed.add_row(
            r["name"],
            f"{r['median_us']:.1f}",
            f"{r['median_wall_us']:.1f}",
            f"{r['p90_us']:.1f}",
            f"{r['right_overall']:.1%}",
        )
    console.print(speed)
    right = Table(title="share of trajectories judged right, per category")
    right.add_column("category")
    for r in results:
        right.add_column(r["name"], justify="right")
    for c in CATEGORIES:
        right.add_row(c, *(f"{r['right_by_category'][c]:.0%}" for r in results))
    console.print(right)
    aem = results[0]["median_us_by_category"]
    console.print("AEM µs by category: " + ", ".join(f"{c} {aem[c]:.1f}" for c in CATEGORIES))


if __name__ == "__main__":
    raise SystemExit(main())
