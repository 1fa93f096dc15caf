"""``aem agreement``: a metric's (or judge's) verdicts against people's labels.

Why a command of its own: ``aem calibrate`` tunes text thresholds from labelled pairs;
this answers the question a team asks before it lets a judge gate CI — does it agree with
us, beyond chance, and where exactly does it not?
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer  # noqa: TID251
from rich.console import Console
from rich.table import Table

from aem.cli.errors import err_console, fail
from aem.cli.exit_codes import ExitCode
from aem.foundation.terminaltext import escape_controls, safe
from aem.report.terminal import output_console
from aem.runs.agreement import UNVERIFIED_RULE, Agreement, Duplicates, Miss, agreement, read_labels
from aem.runs.diff import load_report

_NAMED_IDS = 5


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def render_agreement(result: Agreement, console: Console) -> None:
    """κ with its interval and base rates, the confusion matrix, every miss, the unscored."""
    metric = escape_controls(result.metric)
    if result.kappa is None:
        console.print(f"{metric}: κ undefined — {result.kappa_undefined}", markup=False)
    else:
        interval = (
            f" (95% CI {result.kappa_low:.2f}–{result.kappa_high:.2f})"
            if result.kappa_low is not None and result.kappa_high is not None
            else ""
        )
        console.print(
            f"{metric}: Cohen's κ {result.kappa:.2f}{interval} on {result.scored}", markup=False
        )
    console.print(
        f"agreement {_rate(result.observed_agreement)}; fail rate: people "
        f"{_rate(result.human_fail_rate)}, metric {_rate(result.metric_fail_rate)}"
    )
    table = Table(title="people (rows) × metric (columns)")
    table.add_column("")
    table.add_column("metric pass", justify="right")
    table.add_column("metric fail", justify="right")
    for human in ("pass", "fail"):
        row = result.confusion.get(human, {})
        table.add_row(f"people {human}", str(row.get("pass", 0)), str(row.get("fail", 0)))
    console.print(table)
    _misses(console, "false passes (people: fail)", result.false_passes)
    _misses(console, "false fails (people: pass)", result.false_fails)
    if result.unscored:
        counts = ", ".join(f"{n} {why}" for why, n in sorted(result.unscored.items()))
        console.print(f"not in κ (the run gave no pass or fail): {counts}")
        console.print(safe("  " + ", ".join(result.unscored_ids)))
    console.print(f"{UNVERIFIED_RULE}.", style="dim", markup=False)


def _misses(console: Console, title: str, misses: list[Miss]) -> None:
    if not misses:
        return
    console.print(f"{title}: {len(misses)}")
    for miss in misses:
        where = f"session {miss.session_id}" + (f", turn {miss.turn_id}" if miss.turn_id else "")
        said = miss.explanation.strip() or f"the metric said {miss.metric}, with no explanation"
        console.print(safe(f"  {miss.id} ({where}): {said}"))


def _warn_about_labels(result: Agreement) -> None:
    """Repeats collapsed and conflicts left out, on standard error: κ is over fewer items
    than the file has lines, and the user should know why."""
    console = err_console()
    if result.duplicates_collapsed:
        console.print(
            f"warning: {result.duplicates_collapsed} repeated label line(s) collapsed: each "
            "id counts once in κ (--duplicates refuse makes a repeat an error)",
            markup=False,
        )
    if result.conflicting_ids:
        shown = ", ".join(repr(i) for i in result.conflicting_ids[:_NAMED_IDS])
        more = len(result.conflicting_ids) - _NAMED_IDS
        console.print(
            safe(
                f"warning: {len(result.conflicting_ids)} id(s) labelled both pass and fail, "
                f"left out of κ until settled: {shown}" + (f" and {more} more" if more > 0 else "")
            )
        )


def agreement_command(
    labels: Annotated[
        Path,
        typer.Argument(
            help='human labels, one JSON object a line: {"id": "SESSION/TURN", "label": '
            '"pass"} (or "fail"); TURN is a turn id of the report (t1, t2 …), and an id '
            'without "/TURN" labels the session as a whole; {"session_id": …, "turn_id": …, '
            '"label": …} also works (for a session id holding "/")',
        ),
    ],
    report: Annotated[Path, typer.Argument(help="JSON report of the run (aem audit --out)")],
    metric: Annotated[str, typer.Option(help="the metric or judge to measure")],
    min_kappa: Annotated[
        float | None,
        typer.Option(help="exit 1 when κ is below this (or undefined): a CI gate"),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    duplicates: Annotated[
        str,
        typer.Option(
            help="an id labelled more than once: 'collapse' (counted once, with a warning) "
            "or 'refuse' (exit 2); an id labelled both pass and fail is always left out",
        ),
    ] = "collapse",
) -> None:
    """Cohen's κ between people's pass/fail labels and a metric's verdicts, with a bootstrap
    interval, base rates, the confusion matrix and every false pass and false fail.

    Each labelled id counts once (repeats would inflate κ and narrow its interval).
    A label line reads {"id": "checkout-17/t3", "label": "fail"}: session checkout-17,
    turn t3 (the turn ids of the report); {"id": "checkout-17", ...} is the whole
    session, which the metric fails when it failed any of its turns.
    Unverified is neither pass nor fail: an unverified turn is not in κ, nor is a session
    whose turns include one and no failed turn; both are counted and listed.
    Exit code 1 when --min-kappa is given and κ is below it (or undefined), else 0.
    """
    if duplicates not in ("collapse", "refuse"):
        fail(f"--duplicates {duplicates!r}: expected 'collapse' or 'refuse'")
    try:
        labelled = read_labels(labels)
        run = load_report(report)
    except (OSError, ValueError) as exc:
        fail(exc)
    known = {m.name for s in run.sessions for t in s.turns for m in t.metrics}
    if metric not in known:
        fail(f"the report has no result of metric {metric!r}; it has: {', '.join(sorted(known))}")
    try:
        result = agreement(labelled, run, metric, duplicates=_mode(duplicates))
    except ValueError as exc:
        fail(f"{labels}: {exc}")
    _warn_about_labels(result)
    if json_:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        render_agreement(result, output_console())
    below = min_kappa is not None and (result.kappa is None or result.kappa < min_kappa)
    raise typer.Exit(ExitCode.FOUND if below else ExitCode.OK)


def _mode(value: str) -> Duplicates:
    return "refuse" if value == "refuse" else "collapse"
