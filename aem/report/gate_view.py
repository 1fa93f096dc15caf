"""The gates of a run in the terminal: the score against the threshold, then one row per
case (type, verdict, short explanation) — what a reader needs to see what was missing:
a citation, a supported claim, or an honest refusal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from aem.foundation.model import GateResult, Outcome

_STYLE = {
    Outcome.PASS: "green",
    Outcome.FAIL: "red",
    Outcome.ERROR: "yellow",
    Outcome.SKIP: "dim",
    Outcome.UNVERIFIED: "cyan",
}
_EXPLANATION_CHARS = 160


def gate_line(gate: GateResult) -> str:
    """``gate groundedness: 0.875 >= 0.85 PASSED (7 of 8 cases; 1 judge error excluded)``."""
    verdict = "PASSED" if gate.passed else "FAILED"
    if gate.score is None:
        head = f"gate {gate.metric}: no case to score (threshold {gate.threshold:g}) {verdict}"
    else:
        sign = ">=" if gate.passed else "<"
        head = f"gate {gate.metric}: {gate.score:.3f} {sign} {gate.threshold:g} {verdict}"
    notes = [f"{gate.cases_passed} of {gate.total} cases passed"]
    if gate.errors:
        notes.append(f"{gate.errors} judge error(s) excluded")
    if gate.unverified:
        notes.append(f"{gate.unverified} unverified excluded")
    if gate.skipped:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(gate.skip_reasons.items()))
        notes.append(f"{gate.skipped} skipped" + (f": {reasons}" if reasons else ""))
    if gate.not_scored:
        notes.append(f"{gate.not_scored} session(s) with no {gate.metric} result")
    if gate.unmeasured_share:
        limit = gate.max_unmeasured
        over = limit is not None and gate.unmeasured_share > limit
        bound = "" if limit is None else (f" > {limit:g} allowed" if over else f" <= {limit:g}")
        notes.append(f"unmeasured {gate.unmeasured_share:.0%}{bound}")
    return f"{head} ({'; '.join(notes)})"


def render_gates(gates: list[GateResult], console: Console) -> None:
    for gate in gates:
        table = Table(title=gate_line(gate), title_justify="left")
        table.add_column("session")
        table.add_column("type")
        table.add_column("metric")
        table.add_column("verdict")
        table.add_column("explanation", overflow="fold")
        for row in gate.rows:
            text = row.explanation
            if len(text) > _EXPLANATION_CHARS:
                text = text[: _EXPLANATION_CHARS - 1] + "…"
            style = _STYLE.get(row.verdict, "")
            table.add_row(
                row.session_id,
                row.type or "-",
                row.metric,
                f"[{style}]{row.verdict.value}[/]",
                text,
            )
        console.print(table)
