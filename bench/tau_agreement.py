"""Agreement of AEM's root causes with tau-bench's own verdicts (development check).

Reads the shared development data (not shipped with the repo): 80 real gpt-4o airline
sessions with the run's reward and the first span where the run deviates from ground
truth. Prints (a) how often "the session has a root cause" agrees with reward == 0 and
(b) how often the earliest root-cause span equals ``derived.first_deviation.span_id``
on the failed sessions that have one; then every disagreement with its reason.

Proven and suspected apart. A root cause is a proven failure; a turn AEM could neither
support nor contradict is ``unverified``, and the earliest such turn of a branch with no
failure upstream is a ``suspect`` (``SessionReport.suspects``), never a root cause. So
(a) and (b) score proofs only, and two more figures score the suspects: (c) how many
sessions have suspects but no root cause (on failed runs they are where a reader would
look; on passed runs, doubts about a correct run), and (d) on the failed runs with a
first-deviation span and *no* root cause — the runs (b) cannot score but a suspect might
point into — how often the first suspect's first span is that span (a run with no
suspect counts as a miss). Why only there: where a root cause exists it is AEM's answer.

    python -m bench.tau_agreement [DATA_DIR] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.config import load_config
from aem.foundation.model import RootCause, SessionReport
from bench.devdata import dev_set

DEFAULT = dev_set("tau-bench-airline-dev")


@dataclass(frozen=True)
class TauScore:
    """One session's agreement with tau-bench: the session verdict and the deviation span."""

    session_id: str
    session_agrees: bool
    span_applies: bool  # a failed run with a first-deviation span to compare with
    span_hit: bool
    disagreements: tuple[str, ...] = ()
    any_suspect: bool = False  # some turn is suspect (a root cause or not)
    suspect_only: bool = False  # suspects but no root cause
    # A failed run with a deviation span and no root cause: the first suspect is scored.
    suspect_applies: bool = False
    suspect_hit: bool = False  # ... and its first span is the deviation span


def audit(data: Path, overrides: list[str], workers: int = 1) -> dict[str, SessionReport]:
    """AEM on the tau-bench traces with the references as cases, one report per session."""
    report = audit_paths(
        [str(data / "traces.otlp.jsonl")],
        cases=load_cases(data / "references.jsonl"),
        config=load_config(None, overrides),
        workers=workers,
    )
    return {s.session_id: s for s in report.sessions}


def references(data: Path) -> list[dict[str, Any]]:
    """The reference records, in file order."""
    with (data / "references.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def first_root_cause(result: SessionReport) -> RootCause | None:
    """The root cause on the earliest turn (turn ids are ``t<index>``)."""
    return min(result.root_causes, key=lambda c: int(c.turn_id[1:]), default=None)


def first_suspect(result: SessionReport) -> RootCause | None:
    """The suspect on the earliest turn, read only when there is no root cause."""
    if result.root_causes:
        return None
    return min(result.suspects, key=lambda c: int(c.turn_id[1:]), default=None)


def suspect_score(ref: dict[str, Any], result: SessionReport) -> dict[str, bool]:
    """The suspect fields of a :class:`TauScore`: suspects only, and on a failed run with
    a deviation span and no root cause, whether the first suspect's first span is it."""
    deviation = ((ref.get("derived") or {}).get("first_deviation") or {}).get("span_id")
    applies = bool(ref["outcome"]["reward"] == 0 and deviation and not result.root_causes)
    suspect = first_suspect(result)
    return {
        "any_suspect": bool(result.suspects),
        "suspect_only": bool(result.suspects) and not result.root_causes,
        "suspect_applies": applies,
        "suspect_hit": applies and suspect is not None and deviation in suspect.span_ids[:1],
    }


def score(ref: dict[str, Any], result: SessionReport) -> TauScore:
    """Does AEM agree with tau-bench on this session: root cause present iff reward 0, and
    (on a failed run with a deviation span) the earliest root cause's first span is it."""
    failed_run = ref["outcome"]["reward"] == 0
    deviation = (ref.get("derived") or {}).get("first_deviation") or {}
    first = first_root_cause(result)
    lines = []
    agrees = failed_run == (first is not None)
    if not agrees:
        lines.append(
            f"{result.session_id}: reward={ref['outcome']['reward']} "
            f"deviation={deviation.get('kind')} "
            f"root_causes={[(c.turn_id, c.name, c.metrics) for c in result.root_causes]}"
        )
    applies = bool(failed_run and deviation.get("span_id"))
    hit = applies and first is not None and deviation["span_id"] in first.span_ids[:1]
    if applies and not hit:
        other = first or first_suspect(result)
        said = f"{(other.turn_id, other.name, other.metrics, other.span_ids[:1])}" if other else ""
        said = said if first else f"None (first suspect {said or 'none'})"
        lines.append(
            f"{result.session_id}: first deviation {deviation['kind']} at {deviation['span_id']} "
            f"({deviation.get('tool_name')}); AEM's first root cause {said}"
        )
    return TauScore(
        result.session_id, agrees, applies, hit, tuple(lines), **suspect_score(ref, result)
    )


def suspect_lines(scores: list[TauScore]) -> list[str]:
    """The suspect figures: sessions with suspects only, and the first suspect on the
    failed runs with no root cause."""
    any_suspect = sum(s.any_suspect for s in scores)
    only = sum(s.suspect_only for s in scores)
    total = sum(s.suspect_applies for s in scores)
    hits = sum(s.suspect_hit for s in scores)
    return [
        f"sessions with a suspect: {any_suspect}/{len(scores)}, "
        f"with suspects but no root cause: {only}/{len(scores)}",
        f"first suspect span == first_deviation span (failed, with a span, no root cause): "
        f"{hits}/{total} = {hits / max(total, 1):.1%}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    refs = references(args.data)
    by_id = audit(args.data, args.overrides)
    scores = [score(ref, by_id[ref["session_id"]]) for ref in refs]
    agree = sum(s.session_agrees for s in scores)
    span_total = sum(s.span_applies for s in scores)
    span_hits = sum(s.span_hit for s in scores)
    print(f"sessions: {len(refs)}")
    print(f"root cause <-> reward == 0 agreement: {agree}/{len(refs)} = {agree / len(refs):.1%}")
    print(
        f"root-cause span == first_deviation span (failed sessions with a span): "
        f"{span_hits}/{span_total} = {span_hits / max(span_total, 1):.1%}"
    )
    print("\n".join(suspect_lines(scores)))
    for line in (line for s in scores for line in s.disagreements):
        print("  -", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
