"""The int8 ONNX encoder against fp32 on the claim × document pairs of the groundedness
workload: how many verdicts agree, and what each costs.

Run: ``python -m bench.groundedness.encoders [--data DIR] [--answers N] [--rounds R]
[--workloads distinct,shared] [--threshold 0.99]``

The answers are :mod:`bench.groundedness.speed`'s (RAGTruth Summary development answers
when ``AEM_DEV_DATA`` names the development sets, else synthetic ones). For each backend
(``onnx``, then ``onnx-int8``) a fresh evaluator with only ``groundedness`` scores every
answer; each claim's verdict (supported, unverified, contradicted, unsupported value) is
recorded where the metric decides it (``check_claims``), so what is compared is the claim
set against the answer's documents, claim by claim, and the answer's outcome. Speed: CPU
seconds of this process per answer, model load outside the timer, medians over rounds.

Exit status 1 when the claim agreement is under ``--threshold`` (the bar for making int8
the default), so a run says by itself whether int8 may be the default.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

from aem.cases import Case
from aem.config import load_config
from aem.foundation.model import Session
from aem.metrics import groundedness
from aem.settings import AemConfig
from bench.embeddings.run import write_report
from bench.groundedness.speed import NO_CITATIONS, WORKLOADS, _source, groundedness_evaluator

BACKENDS = ("onnx", "onnx-int8")
Claims = list[tuple[str, str]]
_CHECK = "check_claims"  # where the metric decides each claim (recorded, not replaced)


class _ClaimRecorder:
    """Each ``check_claims`` call's claims and statuses, in order (the real check runs)."""

    def __init__(self) -> None:
        self.calls: list[Claims] = []
        self._check: Callable[..., Any] = getattr(groundedness, _CHECK)

    def __enter__(self) -> _ClaimRecorder:
        setattr(groundedness, _CHECK, self)
        return self

    def __exit__(self, *_: object) -> None:
        setattr(groundedness, _CHECK, self._check)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        checks = self._check(*args, **kwargs)
        self.calls.append([(c.claim, c.status.value) for c in checks])
        return checks


def one_round(
    sessions: list[Session], cases: dict[str, Case], config: AemConfig, backend: str
) -> dict[str, Any]:
    """Every answer through a fresh evaluator on ``backend``: CPU s, outcomes, claims."""
    evaluator, embedder = groundedness_evaluator(cases, config, backend)
    fresh = [copy.deepcopy(s) for s in sessions]
    with _ClaimRecorder() as recorder:
        start = time.process_time()
        reports = [evaluator.evaluate(s) for s in fresh]
        cpu = time.process_time() - start
    outcomes = [
        m.outcome.value
        for report in reports
        for turn in report.turns
        for m in turn.metrics
        if m.name == "groundedness"
    ]
    return {"cpu": cpu, "outcomes": outcomes, "claims": recorder.calls, "used": embedder.precision}


def agreement(first: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Claims and outcomes that agree between two rounds, and the claims that differ."""
    pairs = [
        (a, b)
        for calls_a, calls_b in zip(first["claims"], other["claims"], strict=True)
        for a, b in zip(calls_a, calls_b, strict=True)
    ]
    flips = [(a[0], a[1], b[1]) for a, b in pairs if a != b]
    outcomes = list(zip(first["outcomes"], other["outcomes"], strict=True))
    return {
        "claims": len(pairs),
        "claims_same": len(pairs) - len(flips),
        "claim_agreement": (len(pairs) - len(flips)) / max(1, len(pairs)),
        "answers": len(outcomes),
        "answer_agreement": sum(a == b for a, b in outcomes) / max(1, len(outcomes)),
        "flips": flips,
    }


def measure(
    sessions: list[Session], cases: dict[str, Case], config: AemConfig, rounds: int
) -> dict[str, Any]:
    """Backends interleaved within each round; medians of CPU s; agreement of round 1."""
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in BACKENDS}
    for _ in range(rounds):
        for backend in BACKENDS:
            runs[backend].append(one_round(sessions, cases, config, backend))
    cpu = {b: statistics.median(r["cpu"] for r in runs[b]) / len(sessions) for b in BACKENDS}
    return {
        "cpu_s_per_answer": cpu,
        "speed_up": cpu["onnx"] / cpu["onnx-int8"],
        "used": {b: runs[b][0]["used"] for b in BACKENDS},
        **agreement(runs["onnx"][0], runs["onnx-int8"][0]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=str, help="the development sets (default: $AEM_DEV_DATA)")
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="encoder CPU threads")
    parser.add_argument("--workloads", default="distinct,shared")
    parser.add_argument("--threshold", type=float, default=0.99)
    args = parser.parse_args(argv)
    if args.data:
        from pathlib import Path

        args.data = Path(args.data)
    config = load_config(None, [NO_CITATIONS, f"compare.embedding_threads={args.threads}"])
    report: dict[str, Any] = {"rounds": args.rounds, "workloads": {}}
    status = 0
    for workload in [w.strip() for w in args.workloads.split(",") if w.strip()]:
        answers = _source(args, config, WORKLOADS[workload])
        figures = measure(answers.sessions, answers.cases, config, args.rounds)
        cpu = figures["cpu_s_per_answer"]
        print(
            f"{workload}: {figures['answers']} answers ({answers.name}), "
            f"{figures['claims']} claims: claims agree {figures['claim_agreement']:.2%} "
            f"({figures['claims_same']}/{figures['claims']}), answers agree "
            f"{figures['answer_agreement']:.2%}; CPU s/answer fp32 {cpu['onnx']:.3f}, "
            f"int8 {cpu['onnx-int8']:.3f} ({figures['speed_up']:.2f}x)"
        )
        for claim, fp32, int8 in figures["flips"][:20]:
            print(f"  {fp32} -> {int8}: {claim[:110]!r}")
        status |= figures["claim_agreement"] < args.threshold
        report["workloads"][workload] = {"source": answers.name, **figures}
    write_report("groundedness-encoders", report)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
