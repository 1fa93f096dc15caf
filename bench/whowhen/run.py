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

Proven and suspected apart. A root cause is a *proven* failure (a contradiction or a
structural fact); a turn AEM could neither support nor contradict is ``unverified``, and
the earliest such turn of a branch with no failure upstream is labelled ``suspect``
(``SessionReport.suspects``). Why both are scored, and apart: accuracy over all sessions
mixes two questions — is what AEM proves right (*precision*: of the sessions with a root
cause, the share whose earliest root cause names the labelled agent / step) and how often
does it prove anything (*coverage*: the share of sessions with a root cause). The *first
suspect* (the suspect on the earliest turn) is read only on sessions with no root cause.
Why not on every session: a suspect is where to look *when nothing is proven*; where a
root cause exists, that is AEM's answer and a reader is pointed at it, not at a doubt
(which may sit on another branch or upstream of the failure). Scoring the suspect there
would grade an answer nobody is given. Read this way the two split the sessions without
overlap — proven ones by the root cause, the rest by the first suspect — and "root
cause, else first suspect" is their union.

Prints agent-level and step-level accuracy per subset beside the published GPT-4o
figures (Who&When paper, Table 1, no ground truth given to the judge) and random, then
the proven precision and coverage and the first suspect's accuracy where it is used.

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
from aem.foundation.model import RootCause, SessionReport
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
    proven: bool = False  # the session has a root cause (``agent`` / ``step`` are its)
    # The first suspect's agent and step, read only when there is no root cause.
    suspect: tuple[str | None, int | None] | None = None

    @property
    def agent_hit(self) -> bool:
        return self.agent == self.true_agent

    @property
    def step_hit(self) -> bool:
        return self.step == self.true_step

    @property
    def suspect_used(self) -> bool:
        """The first suspect stands in: no root cause, and some turn is suspect."""
        return not self.proven and self.suspect is not None


def _turn_index(cause: RootCause) -> int:
    return int(cause.turn_id.lstrip("t") or 0)


def earliest(report: SessionReport) -> RootCause | None:
    """The root cause on the earliest turn (turn ids are ``t<index>``)."""
    return min(report.root_causes, key=_turn_index, default=None)


def first_suspect(report: SessionReport) -> RootCause | None:
    """The suspect on the earliest turn; ``None`` when the session has a root cause (the
    suspect is read only where nothing is proven) or no suspect."""
    if report.root_causes:
        return None
    return min(report.suspects, key=_turn_index, default=None)


def blamed(cause: RootCause, steps: dict[str, int]) -> tuple[str | None, int | None]:
    """The agent a cause names (its ``agent``, else its name) and its earliest step."""
    return cause.agent or cause.name, min(
        (steps[s] for s in cause.span_ids if s in steps), default=None
    )


def attribute(report: SessionReport, reference: dict[str, Any]) -> Attribution:
    outcome, derived = reference["outcome"], reference["derived"]
    steps = {span: k for k, span in enumerate(derived["step_span_ids"])}
    cause, suspect = earliest(report), first_suspect(report)
    agent, step = blamed(cause, steps) if cause else (None, None)
    return Attribution(
        session_id=report.session_id,
        agent=agent,
        step=step,
        true_agent=str(outcome["mistake_agent"]),
        true_step=int(outcome["mistake_step"]),
        metrics=tuple(cause.metrics) if cause else (),
        proven=cause is not None,
        suspect=blamed(suspect, steps) if suspect else None,
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


def proven_and_suspected(rows: list[Attribution]) -> dict[str, tuple[int, int]]:
    """(hits, total) of each proven / suspect figure of one subset: the root cause's
    coverage and precision, and the first suspect's accuracy where it is used."""
    proven = [a for a in rows if a.proven]
    used = [a for a in rows if a.suspect_used]
    suspects = [a.suspect for a in used if a.suspect is not None]
    truths = [(a.true_agent, a.true_step) for a in used]
    return {
        "root-cause coverage": (len(proven), len(rows)),
        "root-cause agent precision": (sum(a.agent_hit for a in proven), len(proven)),
        "root-cause step precision": (sum(a.step_hit for a in proven), len(proven)),
        "first suspect used (no root cause)": (len(used), len(rows) - len(proven)),
        "first suspect agent accuracy": (
            sum(s[0] == t[0] for s, t in zip(suspects, truths, strict=True)),
            len(used),
        ),
        "first suspect step accuracy": (
            sum(s[1] == t[1] for s, t in zip(suspects, truths, strict=True)),
            len(used),
        ),
    }


def proven_table(results: dict[str, list[Attribution]]) -> list[str]:
    """Proven root causes and first suspects apart, per subset, with their counts."""
    counted = {name: proven_and_suspected(rows) for name, rows in results.items()}
    lines = [f"{'proven / suspect':36} " + " ".join(f"{name:>16}" for name in results)]
    for figure in next(iter(counted.values()), {}):
        cells = []
        for name in results:
            hits, total = counted[name][figure]
            cells.append(f"{_percent(hits, total):5.1f}% ({hits}/{total})".rjust(16))
        lines.append(f"{figure:36} " + " ".join(cells))
    return lines


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
    print("\n".join(proven_table(results)))
    print("\n".join(details(results)))
    if args.misses:
        for rows in results.values():
            for a in rows:
                if not (a.agent_hit and a.step_hit):
                    suspect = f", first suspect {a.suspect[0]}@{a.suspect[1]}" if a.suspect else ""
                    print(
                        f"  {a.session_id}: said {a.agent}@{a.step} {list(a.metrics)}{suspect}, "
                        f"label {a.true_agent}@{a.true_step}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
