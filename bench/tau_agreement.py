"""Agreement of AEM's root causes with tau-bench's own verdicts (development check).

Reads the shared development data (not shipped with the repo): 80 real gpt-4o airline
sessions with the run's reward and the first span where the run deviates from ground
truth. Prints (a) how often "the session has a root cause" agrees with reward == 0 and
(b) how often the earliest root-cause span equals ``derived.first_deviation.span_id``
on the failed sessions that have one; then every disagreement with its reason.

    python -m bench.tau_agreement [DATA_DIR] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.config import load_config

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau-bench-airline-dev"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    refs = [json.loads(line) for line in (args.data / "references.jsonl").open()]
    cases = load_cases(args.data / "references.jsonl")
    report = audit_paths(
        [str(args.data / "traces.otlp.jsonl")],
        cases=cases,
        config=load_config(None, args.overrides),
    )
    by_id = {s.session_id: s for s in report.sessions}
    agree = 0
    span_hits = span_total = 0
    disagreements = []
    for ref in refs:
        sid = ref["session_id"]
        result = by_id[sid]
        failed_run = ref["outcome"]["reward"] == 0
        has_root = bool(result.root_causes)
        deviation = (ref.get("derived") or {}).get("first_deviation") or {}
        first = min(result.root_causes, key=lambda c: int(c.turn_id[1:])) if has_root else None
        if failed_run == has_root:
            agree += 1
        else:
            disagreements.append(
                f"{sid}: reward={ref['outcome']['reward']} deviation={deviation.get('kind')} "
                f"root_causes={[(c.turn_id, c.name, c.metrics) for c in result.root_causes]}"
            )
        if failed_run and deviation.get("span_id"):
            span_total += 1
            if first is not None and deviation["span_id"] in first.span_ids[:1]:
                span_hits += 1
            else:
                disagreements.append(
                    f"{sid}: first deviation {deviation['kind']} at {deviation['span_id']} "
                    f"({deviation.get('tool_name')}); AEM's first root cause "
                    + (
                        f"{(first.turn_id, first.name, first.metrics, first.span_ids[:1])}"
                        if first
                        else "None"
                    )
                )
    print(f"sessions: {len(refs)}")
    print(f"root cause <-> reward == 0 agreement: {agree}/{len(refs)} = {agree / len(refs):.1%}")
    print(
        f"root-cause span == first_deviation span (failed sessions with a span): "
        f"{span_hits}/{span_total} = {span_hits / max(span_total, 1):.1%}"
    )
    for line in disagreements:
        print("  -", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
