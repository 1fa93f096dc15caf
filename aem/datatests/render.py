"""Terminal output of ``aem test show|compare`` and ``aem checks``.

Everything a run holds that someone else wrote (case ids, explanations, judge replies)
is printed through :func:`aem.datatests.plaintext.plain`: as text, never as markup or
terminal control.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.datatests.results import RunResult, denominator, gate_results, not_run
from aem.foundation.terminaltext import safe as plain


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}".rstrip("0").rstrip(".")


def _warnings(run: RunResult, console: Console) -> None:
    """Judge errors, no-answer cases, unverified, checks that did not run, not evaluable."""
    overall = run.overall
    if not run.fully_evaluated:
        console.print(
            f"not fully evaluated: {overall.errors} judge error(s), "
            "excluded from pass rate and mean",
            style="yellow",
            markup=False,
        )
    if run.no_answer:
        console.print(
            plain(f"no answer: {len(run.no_answer)} case(s): {', '.join(run.no_answer)}"),
            style="yellow",
        )
    if overall.unverified:
        console.print(
            f"{overall.unverified} unverified: nothing proven wrong, nothing confirmed (no "
            "judge decided their claims); excluded from pass rate and mean",
            style="cyan",
            markup=False,
        )
    for item in not_run(run.evaluations):
        console.print(
            plain(f"{item.cases} case(s): {item.check} skipped — {item.reason}"), style="yellow"
        )
    for reason in run.not_evaluable_reasons():
        console.print(plain(f"NOT EVALUABLE: {reason}"), style="red")


def render_run(run: RunResult, console: Console) -> None:
    """Pass rate per check, mean, judge errors, what did not run; then every evaluation."""
    extra = f", extra evaluation {run.pass_no} by {run.judge}" if run.pass_no else ""
    overall = run.overall
    console.print(
        plain(
            f"test {run.test}, run {run.run_id}{extra}: pass rate "
            f"{rate(overall.pass_rate)} ({denominator(run.evaluations, 'all').describe()})"
        ),
        style="bold",
    )
    _warnings(run, console)
    table = Table(
        "check",
        "pass rate",
        "mean score",
        "passed",
        "failed",
        "unverified",
        "judge errors",
        "skipped",
    )
    for s in run.summaries:
        table.add_row(
            plain(s.check),
            rate(s.pass_rate),
            number(s.mean_score),
            str(s.passed),
            str(s.failed),
            str(s.unverified),
            str(s.errors),
            str(s.skipped),
        )
    console.print(table)
    cases = Table("case", "type", "check", "score", "verdict", "explanation")
    for e in run.evaluations:
        verdict = "judge error" if e.outcome.value == "error" else e.outcome.value
        cases.add_row(
            plain(e.case_id),
            plain(e.case_type or ""),
            plain(e.check),
            number(e.score),
            verdict,
            plain(e.explanation),
        )
    console.print(cases)
    for gate in gate_results(run.evaluations, run.gates):
        mark = {
            "ok": Text("ok", "green"),
            "below": Text("BELOW GATE", "red"),
            "not evaluable": Text("NOT EVALUABLE", "red"),
        }[gate.status]
        over = denominator(run.evaluations, gate.check).describe()
        line = plain(f"gate {gate.check} ≥ {rate(gate.minimum)}: {rate(gate.pass_rate)} ({over}) ")
        console.print(line.append_text(mark))


def render_compare(before: RunResult, after: RunResult, console: Console) -> None:
    """Two runs of one test side by side: per check, then the cases whose verdict changed."""
    table = Table(
        "check", f"run {before.run_id}", f"run {after.run_id}", "mean before", "mean after"
    )
    for b, a in zip(before.summaries, after.summaries, strict=False):
        table.add_row(
            plain(b.check),
            rate(b.pass_rate),
            rate(a.pass_rate),
            number(b.mean_score),
            number(a.mean_score),
        )
    table.add_row("all", rate(before.overall.pass_rate), rate(after.overall.pass_rate), "", "")
    console.print(table)
    old = {(e.case_id, e.check): e for e in before.evaluations}
    changed = Table("case", "check", "before", "after", "explanation now")
    for e in after.evaluations:
        was = old.get((e.case_id, e.check))
        if was is not None and (was.outcome, was.score) != (e.outcome, e.score):
            changed.add_row(
                plain(e.case_id),
                plain(e.check),
                f"{was.outcome.value} {number(was.score)}",
                f"{e.outcome.value} {number(e.score)}",
                plain(e.explanation),
            )
    console.print(changed if changed.rows else "no verdict changed")
