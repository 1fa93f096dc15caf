"""How AEM's verdicts hold on generated domains, per value class, language and domain.

    python -m bench.domains.run [--per-variant N] [--cases] [--json FILE] [--show N]

Generates sessions (:mod:`bench.domains.generate`: 12 domains × 4 languages × every
variant), audits them as ``aem audit`` does (with the natural cases file under
``--cases``), and scores each session against its truth by construction:

- a correct session is right when it has no root cause (a suspect is counted apart);
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
                "said": (
                    f"{first.kind} {first.name}: {', '.join(first.metrics)}" if first else "-"
                ),
            }
        )
    return rows


def _share(rows: list[Row], test: Callable[[Row], bool]) -> str:
    if not rows:
        return "—"
    hits = sum(1 for r in rows if test(r))
    return f"{100 * hits / len(rows):.1f} % ({hits}/{len(rows)})"


FIGURES: dict[str, tuple[Callable[[Row], bool], Callable[[Row], bool]]] = {
    "wrong values caught": (lambda r: r["wrong"], lambda r: r["right"]),
    "false fails": (lambda r: not r["wrong"], lambda r: r["root_cause"]),
    "proofs right": (lambda r: r["root_cause"], lambda r: r["at_place"]),
    "correct with a suspect": (lambda r: not r["wrong"], lambda r: r["suspect"]),
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
    for row in [r for r in rows if not r["right"]][: args.show]:
        print(f"- {row['session_id']}: {row['said']}")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
