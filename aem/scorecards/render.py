"""Terminal tables for scorecards: totals of an audit, the conversation list, versions.

Why one place: "38 / 45 · 84.4 / 100" must read the same wherever a total is shown, and a
pending total must never print a number. Every cell that holds what a span or a file
said (conversation ids, step and criterion names, messages) goes through :func:`safe`:
control characters print as escapes and ``[bold]`` prints as written.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.foundation.terminaltext import safe
from aem.scorecards.post_hoc import ScoredConversation
from aem.scorecards.totals import Total
from aem.scorecards.validation import Violation
from aem.scorecards.versions import ConversationState, StoredTotal


def points(total: Total) -> str:
    """``38 / 45`` in step points; ``—`` while pending."""
    if total.total is None:
        return "—"
    return f"{total.total:g} / {total.max:g}"


def hundred(total: Total) -> str:
    return "—" if total.percent is None else f"{total.percent:.1f}"


def passed(total: Total | None) -> str:
    if total is None or total.passed is None:
        return "—"
    return "passed" if total.passed else "not passed"


def waiting_on(total: Total) -> str:
    """The fired blockers, or the steps still awaited (and blockers that could not be
    read), and the steps the pipeline lacks that spans reported."""
    if total.state == "blocked":
        text = "blocker: " + ", ".join(total.blockers)
    else:
        text = ", ".join(total.blocking_steps)
        if total.undecided_blockers:
            text += " (blocker unreadable: " + ", ".join(total.undecided_blockers) + ")"
    if total.ignored_steps:
        text += "; ignored, not in the pipeline: " + ", ".join(total.ignored_steps)
    return text


def _table(title: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")  # an id cut to "c-10…" cannot be looked up
    return table


def _row(table: Table, *cells: object) -> None:
    """A row of inert text: nothing a span or a file said is read as markup or control."""
    table.add_row(*(safe(cell) for cell in cells))


def render_scored(scored: Sequence[ScoredConversation], console: Console) -> None:
    columns = ("conversation", "state", "total", "0–100", "result", "waiting on", "version")
    table = _table("Scorecard totals", columns)
    for item in scored:
        t = item.total
        version = "—" if item.version is None else f"v{item.version}"
        if item.new_version:
            version += " (new)"
        _row(
            table, t.conversation, t.state, points(t), hundred(t), passed(t), waiting_on(t), version
        )
    console.print(table)


def render_conversations(states: Sequence[ConversationState], console: Console) -> None:
    columns = ("pipeline", "conversation", "state", "total", "0–100", "result", "blocking")
    table = _table("Conversations", columns)
    for s in states:
        shown = s.latest if s.state != "pending" else None
        blocking = ", ".join(s.blocking_steps)
        if shown is not None and shown.state == "blocked":
            blocking = "blocker: " + ", ".join(shown.blockers)
        _row(
            table,
            s.pipeline,
            s.conversation,
            s.state,
            points(shown) if shown else "—",
            hundred(shown) if shown else "—",
            passed(shown),
            blocking,
        )
    console.print(table)


def render_versions(versions: Sequence[StoredTotal], console: Console) -> None:
    table = _table("Versions", ("version", "state", "total", "0–100", "result", "config", "steps"))
    for v in versions:
        steps = ", ".join(
            f"{s.step} {'—' if s.score is None else f'{s.score:g}'}/{s.max:g}×{s.weight:g}"
            for s in v.steps
        )
        _row(
            table, f"v{v.version}", v.state, points(v), hundred(v), passed(v), v.config_hash, steps
        )
    console.print(table)


def render_violations(violations: Sequence[Violation], console: Console) -> None:
    console.print(f"[red]refused[/]: {len(violations)} violation(s)")
    for v in violations:
        console.print(Text("  ") + safe(v.code, "bold") + safe(f": {v.message}"), highlight=False)
