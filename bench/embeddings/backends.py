"""Embedding backends side by side: texts/s by text length, verdict agreement, cold start.

Run: ``python -m bench.embeddings.backends [--rounds R] [--threads T] [--cold N]``

Backends (``compare.embedding_backend``): torch fp32 (sentence-transformers, the
baseline), torch bf16 autocast, onnx (the same fp32 network on onnxruntime) and onnx-int8
(its weights quantised). All run in this process on the same texts with the same thread
count, round by round and interleaved, so load from other processes hits them alike;
speeds are medians of rounds, and each is also given as a ratio to torch fp32.

Agreement: ``SemanticComparator.compare`` verdicts (``same`` at the configured
threshold) of each backend against torch fp32, on two sets: the calibration pairs
``bench/groundedness/pairs.jsonl`` (what ``aem calibrate`` reads: each claim with its
nearest passage, so most sit near the threshold — the set the default is chosen on), and
every distinct claim of ``bench/groundedness/claims.jsonl`` against each document of its
context (the comparisons the groundedness check makes, most far from the threshold);
plus the largest similarity difference.

Cold start: from a fresh interpreter to the first vector (import, load, encode one
text), per backend, in subprocesses, with the ONNX export already cached (this run
exports it first if needed): wall seconds and the child's CPU seconds (on a shared
machine the CPU seconds are the steadier figure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from aem.compare import CompareSettings, SemanticComparator, TextEmbedder  # noqa: E402
from bench.embeddings.run import write_report  # noqa: E402

GROUNDEDNESS = REPO / "bench" / "groundedness"
BACKENDS = {  # name -> CompareSettings overrides
    "torch fp32": {"embedding_backend": "torch"},
    "torch bf16": {"embedding_backend": "torch", "embedding_bf16": True},
    "onnx fp32": {"embedding_backend": "onnx"},
    "onnx int8": {"embedding_backend": "onnx-int8"},
}
LENGTHS = {"short": (8, 128), "medium": (40, 64), "long": (250, 16)}  # words, texts
_VOCABULARY = (
    "the refund was issued by airline after customer called about a delayed flight and "
    "booking of hotel room invoice payment error at gate seat upgrade baggage claim policy "
    "within thirty days of purchase your order has been shipped to the address on file"
)
_WORDS = _VOCABULARY.split()


def pair_sets() -> dict[str, list[tuple[str, str]]]:
    """The labelled calibration pairs; each distinct claim against each document of its
    context."""
    calibration = [
        (str(r["a"]), str(r["b"]))
        for r in map(json.loads, (GROUNDEDNESS / "pairs.jsonl").read_text().splitlines())
    ]
    contexts = json.loads((GROUNDEDNESS / "contexts.json").read_text(encoding="utf-8"))
    documents: dict[tuple[str, str], None] = {}
    for line in (GROUNDEDNESS / "claims.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            claim = json.loads(line)
            documents.update(((claim["claim"], doc), None) for doc in contexts[claim["context"]])
    return {"calibration": calibration, "claims x documents": list(documents)}


def texts_by_length(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    return {
        name: [" ".join(rng.choice(_WORDS) for _ in range(words)) for _ in range(count)]
        for name, (words, count) in LENGTHS.items()
    }


def speeds(
    embedders: dict[str, TextEmbedder], texts: dict[str, list[str]], rounds: int
) -> dict[str, dict[str, float]]:
    """Median texts per CPU second per backend and length, backends interleaved within
    each round (CPU time of this process, all its threads: wall time on a shared machine
    also counts the neighbours' turns on the core)."""
    seen: dict[str, dict[str, list[float]]] = {b: {n: [] for n in texts} for b in embedders}
    for _ in range(rounds):
        for name, batch in texts.items():
            for backend, embedder in embedders.items():
                start = time.process_time()
                embedder.encode_uncached(batch)
                seen[backend][name].append(len(batch) / (time.process_time() - start))
    return {b: {n: statistics.median(v) for n, v in by.items()} for b, by in seen.items()}


def agreement(
    embedders: dict[str, TextEmbedder], pairs: list[tuple[str, str]], threshold: float
) -> dict[str, dict[str, Any]]:
    """Each backend's ``compare`` verdicts on ``pairs`` against the torch fp32 verdicts."""
    verdicts: dict[str, list[bool]] = {}
    scores: dict[str, list[float]] = {}
    for backend, embedder in embedders.items():
        settings = CompareSettings(text_similarity_threshold=threshold)
        comparator = SemanticComparator(settings, embedder=embedder)
        results = comparator.compare_many(pairs)
        verdicts[backend] = [r.same for r in results]
        scores[backend] = [embedder.similarity(a, b) for a, b in pairs]
    base, base_scores = verdicts["torch fp32"], scores["torch fp32"]
    out = {}
    for backend in embedders:
        differ = [i for i, (x, y) in enumerate(zip(base, verdicts[backend], strict=True)) if x != y]
        out[backend] = {
            "agreement": 1 - len(differ) / len(pairs),
            "verdicts_differ": len(differ),
            "max_similarity_diff": max(
                abs(x - y) for x, y in zip(base_scores, scores[backend], strict=True)
            ),
            "flipped_pairs": [
                [*pairs[i], round(base_scores[i], 4), round(scores[backend][i], 4)] for i in differ
            ],
        }
    return out


_COLD = """
import sys
from aem.compare import TextEmbedder
TextEmbedder(backend=sys.argv[1], threads={threads}).encode(["cold start"])
print("torch" in sys.modules)
"""


def cold_start(backend: str, threads: int, runs: int) -> dict[str, Any]:
    """Fresh interpreter to first vector: median wall and CPU seconds, and whether torch
    was imported."""
    wall, cpu, torch_imported = [], [], False
    for _ in range(runs):
        before, start = os.times(), time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _COLD.format(threads=threads), backend],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        after = os.times()
        wall.append(time.perf_counter() - start)
        cpu.append(
            after.children_user + after.children_system
            - before.children_user - before.children_system
        )  # fmt: skip
        torch_imported = out[-1] == "True"
    return {
        "seconds": statistics.median(wall),
        "cpu_seconds": statistics.median(cpu),
        "torch_imported": torch_imported,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads per backend")
    parser.add_argument("--cold", type=int, default=2, help="fresh processes per backend")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--backends",
        default=",".join(BACKENDS),
        help="comma-separated subset (torch fp32, the baseline, is always run); bf16 is "
        "the slowest here by far",
    )
    args = parser.parse_args(argv)
    chosen = {"torch fp32", *(b.strip() for b in args.backends.split(","))}
    backends = {name: over for name, over in BACKENDS.items() if name in chosen}
    print(f"load average {os.getloadavg()[0]:.1f}, {args.threads} thread(s) per backend")

    start = time.perf_counter()
    embedders = {
        name: TextEmbedder.from_settings(CompareSettings(embedding_threads=args.threads, **over))
        for name, over in backends.items()
    }
    for embedder in embedders.values():  # load (and export on first use), outside timers
        embedder.encode_uncached(["warm up the model", "and its kernels"])
    print(f"loaded every backend in {time.perf_counter() - start:.1f} s (exports included)")

    threshold = CompareSettings().text_similarity_threshold
    sets = pair_sets()
    agree = {name: agreement(embedders, pairs, threshold) for name, pairs in sets.items()}
    rates = speeds(embedders, texts_by_length(args.seed), args.rounds)
    cold = {
        name: cold_start(over["embedding_backend"], args.threads, args.cold)
        for name, over in backends.items()
        if "embedding_bf16" not in over  # bf16 starts exactly as fp32 does
    }
    report = {
        "threads": args.threads,
        "rounds": args.rounds,
        "pairs": {name: len(pairs) for name, pairs in sets.items()},
        "threshold": threshold,
        "texts_per_s": rates,
        "ratio_to_torch_fp32": {
            b: {n: v / rates["torch fp32"][n] for n, v in by.items()} for b, by in rates.items()
        },
        "agreement": agree,
        "cold_start": cold,
    }
    render(report)
    write_report("embedding-backends", report)
    return 0


def render(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    sets = report["pairs"]
    table = Table(title=f"embedding backends, {report['threads']} thread(s), texts per CPU s")
    for column in [
        "backend",
        *(f"{n} ({w} words)" for n, (w, _) in LENGTHS.items()),
        *(f"agree: {name} ({count})" for name, count in sets.items()),
        "max Δ cos",
        "cold start wall / CPU",
    ]:
        table.add_column(column, justify="left" if column == "backend" else "right")
    for backend, by in report["texts_per_s"].items():
        ratio = report["ratio_to_torch_fp32"][backend]
        agree = {name: report["agreement"][name][backend] for name in sets}
        cold = report["cold_start"].get(backend.replace("bf16", "fp32"), {})
        table.add_row(
            backend,
            *(f"{by[n]:.0f}/s ({ratio[n]:.2f}×)" for n in LENGTHS),
            *(f"{a['agreement']:.1%} ({a['verdicts_differ']} differ)" for a in agree.values()),
            f"{max(a['max_similarity_diff'] for a in agree.values()):.4f}",
            f"{cold['seconds']:.1f} / {cold['cpu_seconds']:.1f} s" if cold else "",
        )
    Console(width=200).print(table)
    for name in sets:
        for backend, agree in report["agreement"][name].items():
            for a, b, base, other in agree["flipped_pairs"]:
                print(f"  {name}, {backend}: {base} -> {other}: {a!r} ~ {b!r}")


if __name__ == "__main__":
    raise SystemExit(main())
