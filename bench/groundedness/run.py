"""The embedded groundedness default on labelled claims: accuracy, false pass, false fail.

Run: ``python -m bench.groundedness.run [--similarity T] [--sweep] [--write-pairs]``

``claims.jsonl`` holds (context, claim, supported?) records written by hand — paraphrases,
reordered facts, changed numbers and dates, added qualifiers, dropped negations, claims
from a document the agent did not retrieve, invented facts, Russian — and
``contexts.json`` the documents each context holds. A *false pass* is an unsupported
claim called supported (the costly error: an invented fact gets through); a *false fail*
a supported claim called unsupported. ``--write-pairs`` writes each claim with its
nearest passage as ``pairs.jsonl`` for ``aem calibrate``, which picks the cosine threshold.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from aem.compare import SemanticComparator
from aem.evidence import ClaimCheck, Thresholds, build_grounding, check_claims
from aem.metrics.groundedness import GroundednessSettings

HERE = Path(__file__).resolve().parent


def load() -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    contexts = json.loads((HERE / "contexts.json").read_text(encoding="utf-8"))
    claims = [
        json.loads(line)
        for line in (HERE / "claims.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return contexts, claims


def judge_all(
    contexts: dict[str, list[str]], claims: list[dict[str, Any]], thresholds: Thresholds
) -> list[ClaimCheck]:
    """Every claim checked against its context's documents (one grounding per context)."""
    comparator = SemanticComparator()
    groundings = {
        name: build_grounding(
            [(f"{name}-{i}", d) for i, d in enumerate(docs)], [], [], comparator.settings
        )
        for name, docs in contexts.items()
    }
    checks: list[ClaimCheck] = []
    for record in claims:
        grounding = groundings[record["context"]]
        checks.extend(check_claims([record["claim"]], grounding, comparator, thresholds))
    return checks


def summary(claims: list[dict[str, Any]], checks: list[ClaimCheck]) -> dict[str, Any]:
    wrong = [(r, c) for r, c in zip(claims, checks, strict=True) if r["supported"] != c.supported]
    unsupported = sum(1 for r in claims if not r["supported"])
    supported = len(claims) - unsupported
    false_pass = sum(1 for r, _ in wrong if not r["supported"])
    false_fail = len(wrong) - false_pass
    by_category: Counter[str] = Counter(r["category"] for r in claims)
    wrong_by_category: Counter[str] = Counter(r["category"] for r, _ in wrong)
    return {
        "claims": len(claims),
        "accuracy": 1 - len(wrong) / len(claims),
        "false_pass_rate": false_pass / unsupported if unsupported else 0.0,
        "false_fail_rate": false_fail / supported if supported else 0.0,
        "false_pass": false_pass,
        "false_fail": false_fail,
        "by_category": {
            k: [by_category[k] - wrong_by_category[k], by_category[k]] for k in sorted(by_category)
        },
        "errors": [
            {
                "claim": r["claim"],
                "labelled_supported": r["supported"],
                "similarity": round(c.similarity, 3),
                "passage": c.passage.text if c.passage else None,
                "why": c.why,
            }
            for r, c in wrong
        ],
    }


def rates(result: dict[str, Any]) -> str:
    """``accuracy 97.7%  false pass 2.0% (1)  false fail 2.7% (1)``."""
    return (
        f"accuracy {result['accuracy']:.1%}  false pass {result['false_pass_rate']:.1%} "
        f"({result['false_pass']})  false fail {result['false_fail_rate']:.1%} "
        f"({result['false_fail']})"
    )


def print_summary(result: dict[str, Any], thresholds: Thresholds) -> None:
    print(
        f"groundedness (embedded default), similarity {thresholds.similarity:.2f}, "
        f"overlap {thresholds.overlap:.2f}: {result['claims']} labelled claims"
    )
    print(rates(result))
    for category, (right, total) in result["by_category"].items():
        print(f"  {category:28} {right}/{total}")
    for error in result["errors"]:
        label = "supported" if error["labelled_supported"] else "unsupported"
        print(
            f"  WRONG ({label}): {error['claim']!r} ~ {error['passage']!r} "
            f"[{error['similarity']}] {error['why']}"
        )


# Categories the cosine threshold decides; changed values, names, qualifiers and negations
# are decided by other rules whatever the cosine, so they would only bias its calibration.
WORDING = (
    "verbatim",
    "paraphrase",
    "reordered",
    "different_document",
    "invented",
    "related_unsupported",
)


def write_pairs(claims: list[dict[str, Any]], checks: list[ClaimCheck]) -> Path:
    """Claim / nearest-passage pairs of the wording categories, for ``aem calibrate``."""
    path = HERE / "pairs.jsonl"
    lines = [
        json.dumps(
            {"a": r["claim"], "b": c.passage.text, "same": r["supported"]}, ensure_ascii=False
        )
        for r, c in zip(claims, checks, strict=True)
        if c.passage is not None and r["category"].removeprefix("russian_") in WORDING
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = GroundednessSettings()
    parser.add_argument("--similarity", type=float, default=defaults.similarity_threshold)
    parser.add_argument("--overlap", type=float, default=defaults.overlap_threshold)
    parser.add_argument("--sweep", action="store_true", help="accuracy at thresholds 0.5-0.9")
    parser.add_argument("--write-pairs", action="store_true", help="write pairs.jsonl")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    contexts, claims = load()
    grid = [round(0.5 + 0.05 * i, 2) for i in range(9)] if args.sweep else [args.similarity]
    result: dict[str, Any] = {}
    for similarity in grid:
        thresholds = Thresholds(similarity, args.overlap)
        checks = judge_all(contexts, claims, thresholds)
        result = summary(claims, checks)
        print_summary(result, thresholds)
        if args.write_pairs:
            print(f"wrote {write_pairs(claims, checks)}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
