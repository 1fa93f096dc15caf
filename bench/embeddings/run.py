"""Free-text comparisons per second through AEM vs the raw model rate, in one run.

Run: ``python -m bench.embeddings.run [--pairs N] [--seed S]``

Three numbers, all measured in this process on the same texts (shared machines drift
5–15 % between runs: compare ratios measured in one run, never absolute times across runs):

1. raw: one ``model.encode`` over the unique texts (same batch size and precision);
2. AEM cold: ``SemanticComparator.compare_many`` on the text pairs with an empty cache —
   parsing, dispatch, de-duplication, one batched encode, cosine per pair;
3. AEM warm: the same pairs again — every text cached, so no model call at all.

The target is cold ≥ 0.8 of raw (as texts per second). Texts come from a seeded
generator of short support-desk sentences, ~30 % of them repeated across pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
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

_SUBJECTS = ["The refund", "Your booking", "The flight", "My order", "The invoice", "Our agent",
             "The baggage claim", "The hotel stay", "The seat upgrade", "Your ticket"]  # fmt: skip
_VERBS = ["was issued", "has been cancelled", "is delayed", "was confirmed", "needs review",
          "was moved", "is on hold", "was escalated", "was updated", "was declined"]  # fmt: skip
_TAILS = ["today", "by the airline", "after the customer called", "for the March trip",
          "without any fee", "because of the weather", "as requested", "this morning",
          "due to a payment error", "at the gate"]  # fmt: skip


def sentences(rng: random.Random, n: int) -> list[str]:
    return [f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_TAILS)}" for _ in range(n)]


def workload(n_pairs: int, seed: int) -> list[tuple[str, str]]:
    """Pairs of short texts; ~30 % of sides reuse an earlier text (cache hits in one run)."""
    rng = random.Random(seed)
    pool: list[str] = []
    pairs = []
    for _ in range(n_pairs):
        sides = []
        for _ in range(2):
            if pool and rng.random() < 0.3:
                sides.append(rng.choice(pool))
            else:
                text = sentences(rng, 1)[0] + f" (case {rng.randrange(10**6)})"
                pool.append(text)
                sides.append(text)
        pairs.append((sides[0], sides[1]))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--bf16", action="store_true", help="enable bf16 autocast")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)

    settings = CompareSettings(embedding_bf16=args.bf16, embedding_threads=args.threads)
    pairs = workload(args.pairs, args.seed)
    unique = list(dict.fromkeys(t for pair in pairs for t in pair))
    print(f"{len(pairs)} pairs, {2 * len(pairs)} texts, {len(unique)} unique")

    # Load and warm the model once (both paths share it), outside every timer.
    embedder = TextEmbedder.from_settings(settings)
    embedder.encode_uncached(["warm up the model", "and its kernels"])
    comparator = SemanticComparator(settings, embedder=embedder)

    # Raw and AEM alternate, round by round, so load from other processes on a shared
    # machine hits both alike; the ratio is the median of per-round ratios.
    rounds = []
    for _ in range(args.rounds):
        embedder.clear_cache()
        start = time.perf_counter()
        embedder.encode_uncached(unique)
        raw_s = time.perf_counter() - start
        embedder.clear_cache()
        calls, encoded = embedder.model_calls, embedder.texts_encoded
        start = time.perf_counter()
        results = comparator.compare_many(pairs)
        cold_s = time.perf_counter() - start
        cold_calls, cold_encoded = embedder.model_calls - calls, embedder.texts_encoded - encoded
        start = time.perf_counter()
        comparator.compare_many(pairs)
        warm_s = time.perf_counter() - start
        warm_calls = embedder.model_calls - calls - cold_calls
        rounds.append(
            {
                "raw_unique_texts_per_s": len(unique) / raw_s,
                "aem_cold_pairs_per_s": len(pairs) / cold_s,
                "aem_cold_unique_texts_per_s": len(unique) / cold_s,
                "ratio_cold_vs_raw": raw_s / cold_s,
                "aem_warm_pairs_per_s": len(pairs) / warm_s,
                "model_calls_cold": cold_calls,
                "texts_encoded_cold": cold_encoded,
                "model_calls_warm": warm_calls,
            }
        )
        r = rounds[-1]
        print(
            f"round {len(rounds)}: raw {r['raw_unique_texts_per_s']:.0f} texts/s | AEM cold "
            f"{r['aem_cold_pairs_per_s']:.0f} pairs/s = {r['aem_cold_unique_texts_per_s']:.0f} "
            f"texts/s, ratio {r['ratio_cold_vs_raw']:.2f} ({cold_calls} model call, "
            f"{cold_encoded} texts) | warm {r['aem_warm_pairs_per_s']:.0f} pairs/s, "
            f"{warm_calls} model calls"
        )
    ratio = statistics.median(r["ratio_cold_vs_raw"] for r in rounds)
    report = {
        "pairs": len(pairs),
        "texts": 2 * len(pairs),
        "unique_texts": len(unique),
        "precision": "bf16" if args.bf16 else "fp32",
        "threads": args.threads,
        "batch_size": settings.embedding_batch_size,
        "median_ratio_cold_vs_raw": ratio,
        "same_verdicts": sum(x.same for x in results),
        "rounds": rounds,
    }
    print(
        f"median AEM/raw ratio {ratio:.2f} (target >= 0.8); repeated texts cost "
        f"{rounds[-1]['model_calls_warm']} model calls on the warm pass"
    )
    write_report("embeddings", report)
    return 0


def write_report(prefix: str, report: dict[str, Any]) -> None:
    """``bench/results/<prefix>-<time>.json``, and a line saying where."""
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"written {path.relative_to(REPO)}")


if __name__ == "__main__":
    raise SystemExit(main())
