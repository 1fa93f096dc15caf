"""The terminal view: per-session turn tables, then the ranked root causes (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.diff import RunDiff
from aem.model import AuditReport, Label, Outcome, SessionReport

_LABEL_STYLE = {
    Label.OK: "green",
    Label.ROOT_CAUSE: "bold red",
    Label.PRIOR_ACTION_FAILED: "yellow",
}


def session_table(report: SessionReport) -> Table:
    title = f"session {report.session_id}"
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
    table.add_column("label", overflow="fold")
    table.add_column("failed metrics", overflow="fold")
    for turn in report.turns:
        failed = [m for m in turn.metrics if m.outcome is Outcome.FAIL]
        label = Text(turn.label.value, style=_LABEL_STYLE[turn.label])
        if turn.inherited_from:
            label.append(f" ← {', '.join(turn.inherited_from)}", style="dim")
        table.add_row(
            turn.turn_id,
            turn.kind.value,
            turn.name,
            label,
            ", ".join(m.name for m in failed),
        )
    return table


def root_cause_reasons(report: SessionReport) -> list[Text]:
    """Why each root cause failed, one line per failed metric (consequences are omitted:
    they are explained by the turn they inherit from; the JSON report has every reason)."""
    lines = []
    for turn in report.turns:
        if turn.label is not Label.ROOT_CAUSE:
            continue
        for metric in turn.metrics:
            if metric.outcome is Outcome.FAIL:
                line = Text(f"  {turn.turn_id} ", style="bold red")
                line.append(f"{metric.name}: ", style="bold")
                line.append(_why(metric.explanation, 300))
                lines.append(line)
    return lines


def _why(explanation: str, limit: int = 140) -> str:
    """The first failed metric's reason, cut to fit a table cell (the JSON has it whole)."""
    return explanation if len(explanation) <= limit else explanation[: limit - 1] + "…"


def ranking_table(report: AuditReport) -> Table:
    table = Table(title="root causes, ranked by sessions hit", title_justify="left")
    table.add_column("#", no_wrap=True)
    table.add_column("sessions", no_wrap=True)
    table.add_column("failed metric", overflow="fold")
    table.add_column("where (turn kind, name) · e.g.", overflow="fold")
    table.add_column("category", overflow="fold")
    total = len(report.sessions)
    for position, item in enumerate(report.ranking, start=1):
        where = Text(f"{item.kind} {item.name}")
        if item.examples:
            example = item.examples[0]
            where.append(f"\n{example['turn_id']} of {example['session_id']}", style="dim")
        table.add_row(
            str(position),
            f"{item.sessions} of {total}",
            item.metric,
            where,
            item.category or "-",
        )
    return table


def render(report: AuditReport, console: Console, *, sessions: bool = True) -> None:
    if sessions:
        for session in report.sessions:
            console.print(session_table(session))
            for line in root_cause_reasons(session):
                console.print(line)
            console.print()
    console.print(ranking_table(report))
    console.print(
        f"{len(report.sessions)} sessions, {report.sessions_with_root_cause} with a root cause, "
        f"{report.spans_read} spans read"
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
            console.print(f"  [dim]{issue.where() or '-'}[/] {issue.kind}: {issue.message}")


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
                Text(kind, style=style), item.signature, str(item.before), str(item.after)
            )
    console.print(table)
    before, after = result.flagged_turns_before, result.flagged_turns_after
    gone = f" ({before - after} went away)" if before > after else ""
    console.print(f"flagged turns: {before} → {after}{gone}")
    fixed, broken = len(result.sessions_fixed), len(result.sessions_broken)
    console.print(f"sessions fixed: {fixed}; newly failing: {broken}")
