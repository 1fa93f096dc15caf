"""The terminal view: per-session turn tables, then the ranked root causes (rich).

Everything that comes from trace data (session ids, turn names, explanations, issue
messages) goes through :func:`safe`: a span name must not be able to clear the screen,
retitle the window or forge output with escape sequences, nor inject rich markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.diff import RunDiff
from aem.evaluate import is_checked
from aem.model import AuditReport, Label, Outcome, SessionReport, TurnVerdict
from aem.ranking import report_categories
from aem.terminaltext import safe

_LABEL_STYLE = {
    Label.OK: "green",
    Label.ROOT_CAUSE: "bold red",
    Label.PRIOR_ACTION_FAILED: "yellow",
}


def session_table(report: SessionReport) -> Table:
    title = Text("session ") + safe(report.session_id)
    notes = []
    if report.session_key_fallback:
        notes.append("no session attribute: grouped by trace id")
    if not report.case_found:
        notes.append("no case")
    if report.cut:
        notes.append("cut at max lifetime")
    table = Table(title=title, caption="; ".join(notes) or None, title_justify="left")
    table.add_column("turn", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("name", overflow="fold")
    # A label is one word (plus what it inherits): never folded mid-word at 80 columns,
    # which is the width rich assumes when output is not a terminal (make, CI).
    table.add_column("label", no_wrap=True, min_width=len("prior_action_failed"))
    table.add_column("failed metrics", overflow="fold")
    for turn in report.turns:
        failed = [m for m in turn.metrics if m.outcome is Outcome.FAIL]
        label = _label(turn)
        if turn.inherited_from:
            label.append_text(safe(f" ← {', '.join(turn.inherited_from)}", style="dim"))
        table.add_row(
            safe(turn.turn_id),
            safe(turn.kind.value),
            safe(turn.name),
            label,
            safe(", ".join(m.name for m in failed)),
        )
    return table


def _label(turn: TurnVerdict) -> Text:
    """The turn's label; an "ok" where every metric skipped reads as not checked (``–``
    and the number of skips), so a pass and the absence of any check look different."""
    if turn.label is Label.OK and not is_checked(turn):
        skipped = sum(1 for m in turn.metrics if m.outcome is Outcome.SKIP)
        return Text(f"– not checked ({skipped} skipped)", style="dim")
    return Text(turn.label.value, style=_LABEL_STYLE[turn.label])


def root_cause_reasons(report: SessionReport) -> list[Text]:
    """Why each root cause failed, one line per failed metric (consequences are omitted:
    they are explained by the turn they inherit from; the JSON report has every reason)."""
    lines = []
    for turn in report.turns:
        if turn.label is not Label.ROOT_CAUSE:
            continue
        for metric in turn.metrics:
            if metric.outcome is Outcome.FAIL:
                line = safe(f"  {turn.turn_id} ", style="bold red")
                line.append_text(safe(f"{metric.name}: ", style="bold"))
                line.append_text(safe(_why(metric.explanation, 300)))
                lines.append(line)
    return lines


def _why(explanation: str, limit: int = 140) -> str:
    """The first failed metric's reason, cut to fit a table cell (the JSON has it whole)."""
    return explanation if len(explanation) <= limit else explanation[: limit - 1] + "…"


def ranking_table(report: AuditReport, *, observations: bool = False) -> Table:
    """Root causes (or, with ``observations``, observation failures) by sessions hit."""
    title = "observations (not root causes)" if observations else "root causes"
    table = Table(title=f"{title}, ranked by sessions hit", title_justify="left")
    table.add_column("#", no_wrap=True)
    table.add_column("sessions", no_wrap=True)
    table.add_column("failed metric", overflow="fold")
    table.add_column("where (turn kind, name) · e.g.", overflow="fold")
    table.add_column("category", overflow="fold")
    total = len(report.sessions)
    for position, item in enumerate(
        report.observations if observations else report.ranking, start=1
    ):
        where = safe(f"{item.kind} {item.name}")
        if item.examples:
            example = item.examples[0]
            where.append("\n")
            where.append_text(safe(f"{example['turn_id']} of {example['session_id']}", "dim"))
        table.add_row(
            str(position),
            f"{item.sessions} of {total}",
            safe(item.metric),
            where,
            safe(item.category or "-"),
        )
    return table


def plural(count: int, noun: str) -> str:
    """``1 session``, ``2 sessions``.

    >>> plural(1, "session"), plural(0, "turn")
    ('1 session', '0 turns')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _sessions(report: AuditReport, console: Console) -> None:
    """Each session's turn table and reasons; a session with no turns (a trace holding
    only set-up spans) is one line, not an empty table that reads as "all fine"."""
    empty = [s.session_id for s in report.sessions if not s.turns]
    for session in report.sessions:
        if session.turns:
            console.print(session_table(session))
            for line in root_cause_reasons(session):
                console.print(line)
            console.print()
    if empty:
        line = safe(f"{plural(len(empty), 'session')} with no turns to evaluate: ", "dim")
        console.print(line + safe(", ".join(empty[:10]) + (", …" if len(empty) > 10 else "")))


def category_table(report: AuditReport) -> Table | None:
    """Root causes grouped by the team's categories (``[[taxonomy]]`` rules), largest
    share first; ``None`` when no rule named any category."""
    shares = report_categories(report)
    if not any(row.category for row in shares):
        return None
    table = Table(title="failure categories", title_justify="left")
    table.add_column("category", overflow="fold")
    table.add_column("root causes", no_wrap=True, justify="right")
    table.add_column("sessions", no_wrap=True, justify="right")
    table.add_column("share", no_wrap=True, justify="right")
    for row in shares:
        table.add_row(
            safe(row.category or "(no category)"),
            str(row.root_causes),
            str(row.sessions),
            f"{row.share:.0%}",
        )
    return table


def category_line(report: AuditReport) -> Text | None:
    """``56% of failures fall in one category: <name>`` for the largest category."""
    shares = report_categories(report)
    if not shares or shares[0].category is None:
        return None
    top = shares[0]
    return Text(f"{top.share:.0%} of failures fall in one category: ") + safe(
        top.category or "", "bold"
    )


def unverified_lines(report: AuditReport) -> list[Text]:
    """``12 claims unverified (no judge configured: set metrics.groundedness.judge)``, one
    line per metric that left claims undecided: no fail, no root cause, but a reader must
    know how much nobody confirmed."""
    counts: dict[str, int] = {}
    for session in report.sessions:
        for turn in session.turns:
            for metric in turn.metrics:
                if metric.unverified:
                    counts[metric.name] = counts.get(metric.name, 0) + len(metric.unverified)
    return [
        Text(f"{plural(count, 'claim')} unverified", style="cyan")
        + safe(f" by {name} (no judge configured: set metrics.{name}.judge)")
        for name, count in sorted(counts.items())
    ]


def render(report: AuditReport, console: Console, *, sessions: bool = True) -> None:
    if sessions:
        _sessions(report, console)
    console.print(ranking_table(report))
    categories, headline = category_table(report), category_line(report)
    if categories is not None:
        console.print(categories)
    if headline is not None:
        console.print(headline)
    if report.observations:
        console.print(ranking_table(report, observations=True))
    unchecked = sum(s.unchecked_turns for s in report.sessions)
    console.print(
        f"{plural(len(report.sessions), 'session')}, {report.sessions_with_root_cause} with "
        f"a root cause, {plural(report.spans_read, 'span')} read"
        + (f", {unchecked} turns not checked" if unchecked else "")
    )
    for line in unverified_lines(report):
        console.print(line)
    if report.sessions and not any(s.case_found for s in report.sessions):
        console.print(
            "[yellow]no case matched any session[/]: checks that need a case (expected "
            "calls, facts, key points) did not run; case session_ids must equal the "
            "sessions' ids"
        )
    if report.skipped.by_kind:
        console.print(
            f"[yellow]input problems[/]: {report.skipped.total_spans_skipped} spans skipped; "
            + ", ".join(f"{k}={v}" for k, v in sorted(report.skipped.by_kind.items()))
        )
        shown = [i for i in report.issues][:20] + [i for s in report.sessions for i in s.issues][
            :20
        ]
        for issue in shown:
            line = Text("  ") + safe(issue.where() or "-", style="dim")
            console.print(line + safe(f" {issue.kind}: {issue.message}"))


def render_diff(result: RunDiff, console: Console) -> None:
    table = Table(title="root causes, before → after (sessions hit)", title_justify="left")
    table.add_column("change", no_wrap=True)
    table.add_column("signature", overflow="fold")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    for kind, style, items in (
        ("gone", "green", result.disappeared),
        ("new", "bold red", result.appeared),
        ("changed", "yellow", result.changed),
    ):
        for item in items:
            table.add_row(
                Text(kind, style=style), safe(item.signature), str(item.before), str(item.after)
            )
    console.print(table)
    before, after = result.flagged_turns_before, result.flagged_turns_after
    gone = f" ({before - after} went away)" if before > after else ""
    console.print(f"flagged turns: {before} → {after}{gone}")
    fixed, broken = len(result.sessions_fixed), len(result.sessions_broken)
    console.print(f"sessions fixed: {fixed}; newly failing: {broken}")
