"""How AEM's verdicts hold on generated domains, per value class, language and domain.

    python -m bench.domains.run [--per-variant N] [--cases] [--json FILE] [--show N]

Generates sessions (:mod:`bench.domains.generate`: 12 domains × 4 languages × every
variant), audits them as ``aem audit`` does (with the natural cases file under
``--cases``), and scores each session against its truth by construction:

- a correct session is right when it has no root cause (a suspect is counted apart);
- the flows (:mod:`bench.domains.flows`) are scored on their own figures too: answers
  above a proof labelled ``prior_action_failed``, success claimed after a failure failed,
  the answer with an unsupported value a suspect, a reasoning-only doubt no suspect;
- a wrong session is right when its earliest root cause sits where the proof is (the
  answer; the call that passed the wrong argument).

Figures: *wrong values caught* (wrong sessions right), *false fails* (correct sessions
with a root cause), *proofs right* (root causes at the expected turn, of all root causes),
and *correct sessions with a suspect*. Beside each overall figure, the worst single domain:
no rule here is tuned per domain, so a class that holds only where it was written shows
up as one domain far below the rest (leave-one-domain-out, read per domain).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from aem.api import audit_paths, load_cases
from aem.config import load_config
from bench.domains.generate import Truth, generate

Row = dict[str, Any]


def score(truths: Iterable[Truth], report: Any) -> list[Row]:
    """One row per session: its truth and what AEM said."""
    sessions = {s.session_id: s for s in report.sessions}
    rows = []
    for truth in truths:
        session = sessions.get(truth.session_id)
        causes = list(session.root_causes) if session is not None else []
        first = causes[0] if causes else None
        at_place = (
            first is not None
            and first.kind == truth.expected_kind
            and (truth.expected_name is None or first.name == truth.expected_name)
        )
        rows.append(
            {
                **truth.__dict__,
                "root_cause": bool(causes),
                "right": at_place if truth.wrong else not causes,
                "at_place": at_place,
                "suspect": bool(session.suspects) if session is not None else False,
                **_flow_facts(session),
                "said": (
                    f"{first.kind} {first.name}: {', '.join(first.metrics)}" if first else "-"
                ),
            }
        )
    return rows


def _flow_facts(session: Any) -> Row:
    """What the flows are scored on: the answers labelled ``prior_action_failed``, whether
    the last answer failed for a claimed success, and its label."""
    if session is None:
        return {"inherited": 0, "claim_failed": False, "answer_label": "-"}
    answers = [t for t in session.turns if t.kind == "answer"]
    last = answers[-1] if answers else None
    claim = last is not None and any(
        m.outcome == "fail" and "success claimed" in m.explanation for m in last.metrics
    )
    return {
        "inherited": sum(1 for t in answers if t.label == "prior_action_failed"),
        "claim_failed": claim,
        "answer_label": str(last.label) if last is not None else "-",
    }


def flow_lines(rows: list[Row]) -> list[str]:
    """The flows' own figures: inheritances labelled, claims failed, suspects where told."""
    wrong_relays = [r for r in rows if r["inherits"]]
    expected = sum(r["inherits"] for r in wrong_relays)
    labelled = sum(min(r["inherited"], r["inherits"]) for r in wrong_relays)
    extra = sum(r["inherited"] for r in rows if r["variant"] == "relay_right_1")
    claims = [r for r in rows if r["answer_fails"]]
    honest = [r for r in rows if r["variant"] == "honest_failure"]
    told = [r for r in rows if r["answer_suspect"]]
    doubts = [r for r in rows if r["variant"] == "doubt_in_reasoning"]
    return [
        f"inheritances labelled: {labelled}/{expected}; in correct relays: {extra}",
        _line("claimed success failed", claims, lambda r: r["claim_failed"]),
        _line("honest answer after failure kept", honest, lambda r: not r["claim_failed"]),
        _line(
            "answer with an unsupported value a suspect",
            told,
            lambda r: r["answer_label"] == "suspect",
        ),
        _line("reasoning-only doubt with no suspect", doubts, lambda r: not r["suspect"]),
    ]


def _line(name: str, rows: list[Row], test: Callable[[Row], bool]) -> str:
    return f"{name}: {_share(rows, test)}"


def _share(rows: list[Row], test: Callable[[Row], bool]) -> str:
    if not rows:
        return "—"
    hits = sum(1 for r in rows if test(r))
    return f"{100 * hits / len(rows):.1f} % ({hits}/{len(rows)})"


FIGURES: dict[str, tuple[Callable[[Row], bool], Callable[[Row], bool]]] = {
    "wrong values caught": (lambda r: r["wrong"], lambda r: r["right"]),
    "false fails": (lambda r: not r["wrong"], lambda r: r["root_cause"]),
    "proofs right": (lambda r: r["root_cause"], lambda r: r["at_place"]),
    # Correct sessions that state nothing unsupported (doubt_in_answer states one on purpose:
    # its suspect is expected, counted in the flows' figures).
    "correct with a suspect": (
        lambda r: not r["wrong"] and not r.get("answer_suspect"),
        lambda r: r["suspect"],
    ),
}


def _worst_domain(rows: list[Row], name: str) -> str:
    keep, test = FIGURES[name]
    by_domain: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if keep(r):
            by_domain[r["domain"]].append(r)
    if not by_domain:
        return "—"
    shares = {d: sum(map(test, rs)) / len(rs) for d, rs in by_domain.items()}
    lower_is_better = name in ("false fails", "correct with a suspect")
    pick = max if lower_is_better else min
    domain = pick(shares, key=lambda d: shares[d])
    return f"{100 * shares[domain]:.1f} % ({domain})"


def table(rows: list[Row], group: str) -> list[str]:
    """Each figure per value of ``group`` (variant, language or domain)."""
    lines = [f"| {group} | " + " | ".join(FIGURES) + " |", "|---" * (len(FIGURES) + 1) + "|"]
    values = sorted({r[group] for r in rows})
    for value in [*values, "all"]:
        part = [r for r in rows if value == "all" or r[group] == value]
        cells = [_share([r for r in part if keep(r)], test) for keep, test in FIGURES.values()]
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    lines.append(
        "| worst domain | " + " | ".join(_worst_domain(rows, name) for name in FIGURES) + " |"
    )
    return lines


def audit(folder: Path, with_cases: bool) -> Any:
    cases = load_cases(folder / "cases.jsonl") if with_cases else None
    return audit_paths(
        [str(folder / "traces.otlp.jsonl")], config=load_config(None, []), workers=1, cases=cases
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-variant", type=int, default=1)
    parser.add_argument("--cases", action="store_true", help="audit with the natural cases file")
    parser.add_argument("--json", type=Path, help="write the per-session rows here")
    parser.add_argument("--show", type=int, default=0, help="print N wrongly judged sessions")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        truths = generate(folder, args.per_variant)
        rows = score(truths, audit(folder, args.cases))
    print(f"{len(rows)} sessions, cases file: {'yes' if args.cases else 'no'}\n")
    for group in ("variant", "language", "shape"):
        print("\n".join(table(rows, group)), end="\n\n")
    print("\n".join(flow_lines(rows)), end="\n\n")
    for row in [r for r in rows if not r["right"]][: args.show]:
        print(f"- {row['session_id']}: {row['said']}")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
