"""Who&When failure attribution with AEM's earliest root cause (development benchmark).

Reads the shared development data (not shipped with the repo): 77 real failed
multi-agent sessions of the public Who&When benchmark — AG2 "Algorithm-Generated" (AG)
and Magentic-One "Hand-Crafted" (HC) — with the human labels ``outcome.mistake_agent``
and ``outcome.mistake_step`` (history step k is the span ``derived.step_span_ids[k]``).
AEM is run exactly as ``aem audit TRACES --cases REFERENCES`` runs it; a session's
prediction is its earliest root cause (lowest turn index): the agent is the name the
report gives that turn's acting agent (its ``agent``, else its name), the step is the
earliest step among the turn's spans (a code run linked to the message that wrote the
code is attributed to that message). A session with
no root cause counts as wrong on both levels.

Prints agent-level and step-level accuracy per subset beside the published GPT-4o
figures (Who&When paper, Table 1, no ground truth given to the judge) and random.

    python -m bench.whowhen.run [DATA_DIR] [--set key=value ...] [--misses]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.config import load_config
from aem.model import RootCause, SessionReport
from bench.devdata import dev_set

DEFAULT = dev_set("whowhen-dev")
SUBSETS = {"AG": "whowhen_algorithm_generated", "HC": "whowhen_hand_crafted"}
# Who&When paper, Table 1 (percent): agent-level, step-level.
PUBLISHED = {
    "GPT-4o (all-at-once, published)": {"AG": (51.1, 13.5), "HC": (53.4, 3.5)},
    "random (published)": {"AG": (29.1, 19.1), "HC": (12.0, 4.2)},
}


@dataclass(frozen=True)
class Attribution:
    """What AEM named for one session, against the human label."""

    session_id: str
    agent: str | None
    step: int | None
    true_agent: str
    true_step: int
    metrics: tuple[str, ...] = ()

    @property
    def agent_hit(self) -> bool:
        return self.agent == self.true_agent

    @property
    def step_hit(self) -> bool:
        return self.step == self.true_step


def earliest(report: SessionReport) -> RootCause | None:
    """The root cause on the earliest turn (turn ids are ``t<index>``)."""
    if not report.root_causes:
        return None
    return min(report.root_causes, key=lambda c: int(c.turn_id.lstrip("t") or 0))


def attribute(report: SessionReport, reference: dict[str, Any]) -> Attribution:
    outcome, derived = reference["outcome"], reference["derived"]
    steps = {span: k for k, span in enumerate(derived["step_span_ids"])}
    cause = earliest(report)
    step = None
    if cause is not None:
        step = min((steps[s] for s in cause.span_ids if s in steps), default=None)
    return Attribution(
        session_id=report.session_id,
        agent=(cause.agent or cause.name) if cause else None,
        step=step,
        true_agent=str(outcome["mistake_agent"]),
        true_step=int(outcome["mistake_step"]),
        metrics=tuple(cause.metrics) if cause else (),
    )


def subset_references(data: Path, stem: str) -> list[dict[str, Any]]:
    """The labelled references of one subset, in file order."""
    with (data / f"{stem}.references.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def run_subset(data: Path, stem: str, overrides: list[str], workers: int = 1) -> list[Attribution]:
    """AEM on one subset, as ``aem audit`` runs it; one attribution per labelled session."""
    references = subset_references(data, stem)
    report = audit_paths(
        [str(data / f"{stem}.otlp.jsonl")],
        cases=load_cases(data / f"{stem}.references.jsonl"),
        config=load_config(None, overrides),
        workers=workers,
    )
    by_id = {s.session_id: s for s in report.sessions}
    return [attribute(by_id[r["session_id"]], r) for r in references if r["session_id"] in by_id]


def _percent(hits: int, total: int) -> float:
    return 100.0 * hits / total if total else 0.0


def table(results: dict[str, list[Attribution]]) -> list[str]:
    """The comparison table, one row per method, agent and step accuracy per subset."""
    lines = [f"{'method':36} {'AG agent':>9} {'AG step':>8} {'HC agent':>9} {'HC step':>8}"]
    ours = []
    for name in SUBSETS:
        rows = results[name]
        ours.append(_percent(sum(a.agent_hit for a in rows), len(rows)))
        ours.append(_percent(sum(a.step_hit for a in rows), len(rows)))
    lines.append(f"{'AEM earliest root cause':36} " + " ".join(f"{v:8.1f}%" for v in ours))
    for method, figures in PUBLISHED.items():
        values = [v for name in SUBSETS for v in figures[name]]
        lines.append(f"{method:36} " + " ".join(f"{v:8.1f}%" for v in values))
    return lines


def details(results: dict[str, list[Attribution]]) -> list[str]:
    """Counts that explain the figures: sessions, no root cause, metric of the earliest."""
    lines = []
    for name, rows in results.items():
        none = sum(1 for a in rows if a.agent is None)
        by_metric = Counter(a.metrics[0] if a.metrics else "-" for a in rows)
        hits = Counter(a.metrics[0] for a in rows if a.step_hit and a.metrics)
        lines.append(
            f"{name}: {len(rows)} sessions, {none} without a root cause; earliest root cause "
            f"by metric {dict(by_metric)}; step hits by metric {dict(hits)}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--misses", action="store_true", help="list every miss")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"no Who&When data at {args.data}", file=sys.stderr)
        return 2
    results = {name: run_subset(args.data, stem, args.overrides) for name, stem in SUBSETS.items()}
    print("\n".join(table(results)))
    print("\n".join(details(results)))
    if args.misses:
        for rows in results.values():
            for a in rows:
                if not (a.agent_hit and a.step_hit):
                    print(
                        f"  {a.session_id}: said {a.agent}@{a.step} {list(a.metrics)}, "
                        f"label {a.true_agent}@{a.true_step}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
