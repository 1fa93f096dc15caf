"""The embedded refusal default on labelled sentences: does each one decline?

Run: ``python -m bench.groundedness.refusals [--similarity T] [--write-pairs]``

``refusals.jsonl`` holds sentences written by hand, English and Russian: honest refusals
in many wordings (with and without a cue phrase) and statements that are not refusals —
negative answers ("No, we don't offer gift wrapping"), invented facts, apologies before
a fact. A *false pass* is a statement read as a refusal (an invented "No, crypto is not
supported" would get through an ``oos`` case); a *false fail* an honest refusal missed.
``--write-pairs`` writes each English sentence without a cue phrase with its nearest
exemplar as ``refusal_pairs.jsonl`` for ``aem calibrate``, which picks the cosine.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from aem.compare import SemanticComparator
from aem.evidence import EXEMPLARS, cyrillic, has_cue
from aem.metrics.refusal import RefusalSettings, decline_scores
from bench.groundedness.run import rates

HERE = Path(__file__).resolve().parent


def load() -> list[dict[str, Any]]:
    lines = (HERE / "refusals.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def judge_all(records: list[dict[str, Any]], threshold: float) -> list[bool]:
    """Whether the metric reads each sentence as declining."""
    embedder = SemanticComparator().embedder
    scores = decline_scores([r["sentence"] for r in records], embedder, [], english_model=True)
    return [score >= threshold for score in scores]


def summary(records: list[dict[str, Any]], declines: list[bool]) -> dict[str, Any]:
    wrong = [r for r, d in zip(records, declines, strict=True) if r["declines"] != d]
    refusals = sum(1 for r in records if r["declines"])
    statements = len(records) - refusals
    false_pass = sum(1 for r in wrong if not r["declines"])
    return {
        "sentences": len(records),
        "accuracy": 1 - len(wrong) / len(records),
        "false_pass": false_pass,
        "false_pass_rate": false_pass / statements if statements else 0.0,
        "false_fail": len(wrong) - false_pass,
        "false_fail_rate": (len(wrong) - false_pass) / refusals if refusals else 0.0,
        "by_language": {
            lang: [
                sum(1 for r in records if r["lang"] == lang and r not in wrong),
                sum(1 for r in records if r["lang"] == lang),
            ]
            for lang in sorted({r["lang"] for r in records})
        },
        "errors": [{"sentence": r["sentence"], "labelled_declines": r["declines"]} for r in wrong],
    }


def write_pairs(records: list[dict[str, Any]]) -> Path:
    """English sentences without a cue, each with its nearest exemplar (the pairs the
    cosine threshold decides), for ``aem calibrate``."""
    chosen = [r for r in records if not has_cue(r["sentence"]) and not cyrillic(r["sentence"])]
    embedder = SemanticComparator().embedder
    vectors = embedder.encode([*(r["sentence"] for r in chosen), *EXEMPLARS])
    cosines = vectors[: len(chosen)] @ vectors[len(chosen) :].T
    path = HERE / "refusal_pairs.jsonl"
    lines = [
        json.dumps(
            {"a": r["sentence"], "b": EXEMPLARS[int(cosines[i].argmax())], "same": r["declines"]},
            ensure_ascii=False,
        )
        for i, r in enumerate(chosen)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--similarity", type=float, default=RefusalSettings().similarity_threshold)
    parser.add_argument("--write-pairs", action="store_true", help="write refusal_pairs.jsonl")
    args = parser.parse_args()
    records = load()
    result = summary(records, judge_all(records, args.similarity))
    print(
        f"refusal (embedded default), exemplar similarity {args.similarity:.2f}: "
        f"{result['sentences']} labelled sentences"
    )
    print(rates(result))
    for lang, (right, total) in result["by_language"].items():
        print(f"  {lang}: {right}/{total}")
    for error in result["errors"]:
        label = "a refusal" if error["labelled_declines"] else "a statement"
        print(f"  WRONG ({label}): {error['sentence']!r}")
    if args.write_pairs:
        print(f"wrote {write_pairs(records)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
