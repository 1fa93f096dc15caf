"""The terminal view: per-session turn tables, then the ranked root causes, the ranked
suspects, then the summary lines (rich).

Why a fixed width when piped: rich assumes 80 columns when output is not a terminal (CI
logs, ``make demo`` through a pipe, ``| tee``), which folded metric names mid-word.
:func:`output_console` gives piped output at least :data:`PIPED_WIDTH` columns.

Why the summary is a list of line builders: each says one thing about the whole run
(counts, unverified claims, missing cases, skipped input); a new one is one function
added to :data:`SUMMARY_LINES`.

Why suspects are ranked apart, under the root causes: a suspect is no failure (nothing
proved the value wrong), so it must not sit among root causes; but when a run has no
proof, its suspects are where a reader looks first, so they get their own ranking.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.foundation.model import AuditReport, RankedRootCause
from aem.metrics.tool_set import is_allowed_extra
from aem.ranking import report_categories
from aem.report.safe_text import plural, safe
from aem.report.session_view import SUSPECT_STYLE, print_sessions
from aem.runs.diff import RunDiff

__all__ = ["PIPED_WIDTH", "output_console", "plural", "render", "render_diff", "safe"]

# Wide enough for a turn table with long tool and metric names and a ranking row with
# its example; a wider COLUMNS (or terminal, when only stdout is piped) is kept.
PIPED_WIDTH = 120


def output_console(*, stderr: bool = False) -> Console:
    """The console a command prints its view to (stdout, or ``stderr``): the terminal's
    own width on a terminal, at least :data:`PIPED_WIDTH` columns otherwise."""
    console = Console(stderr=stderr)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, width=max(PIPED_WIDTH, console.width))


# Per ranking: its title, what its metric column names, and the title's style.
RankingKind = Literal["root_causes", "observations", "suspects"]
_RANKINGS: dict[RankingKind, tuple[str, str, str]] = {
    "root_causes": ("root causes, ranked by sessions hit", "failed metric", ""),
    "observations": ("observations (not root causes), ranked by sessions hit", "failed metric", ""),
    "suspects": (
        "suspects, ranked by sessions hit (nothing proven: look here first)",
        "unverified metric",
        SUSPECT_STYLE,
    ),
}


def _ranked(report: AuditReport, kind: RankingKind) -> list[RankedRootCause]:
    if kind == "observations":
        return report.observations
    return report.suspects if kind == "suspects" else report.ranking


def ranking_table(
    report: AuditReport, *, observations: bool = False, kind: RankingKind | None = None
) -> Table:
    """Root causes (or, with ``observations``, observation failures; with ``kind``,
    whichever ranking it names) by sessions hit."""
    kind = kind or ("observations" if observations else "root_causes")
    title, metric_column, style = _RANKINGS[kind]
    table = Table(title=Text(title, style=style), title_justify="left")
    table.add_column("#", no_wrap=True)
    table.add_column("sessions", no_wrap=True)
    table.add_column(metric_column, overflow="fold")
    table.add_column("where (turn kind, name) · e.g.", overflow="fold")
    table.add_column("category", overflow="fold")
    total = len(report.sessions)
    for position, item in enumerate(_ranked(report, kind), start=1):
        where = safe(f"{item.kind} {item.name}")
        if item.examples:
            example = item.examples[0]
            where.append("\n")
            where.append_text(safe(f"{example['turn_id']} of {example['session_id']}", "dim"))
        table.add_row(
            str(position),
            f"{item.sessions} of {total}",
            safe(item.metric, style),
            where,
            safe(item.category or "-"),
        )
    return table


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
    know how much nobody confirmed. The judge hint only for a metric that names its judge
    setting in its own explanation (a metric without one would be sent to a knob that
    does not exist)."""
    counts: dict[str, int] = {}
    judged: set[str] = set()
    for session in report.sessions:
        for turn in session.turns:
            for metric in turn.metrics:
                if metric.unverified:
                    counts[metric.name] = counts.get(metric.name, 0) + len(metric.unverified)
                    if f"metrics.{metric.name}.judge" in metric.explanation:
                        judged.add(metric.name)
    return [
        Text(f"{plural(count, 'claim')} unverified", style="cyan")
        + safe(
            f" by {name} (no judge configured: set metrics.{name}.judge)"
            if name in judged
            else f" by {name} (nothing in the trace supports or contradicts them)"
        )
        for name, count in sorted(counts.items())
    ]


def allowed_lines(report: AuditReport) -> list[Text]:
    """``3 extra calls allowed by tool_choice ([matching] extra_calls): fs.ls ×2,
    get_user``: every session's, the tables above say each one where it was made."""
    counts: dict[str, int] = {}
    for session in report.sessions:
        for turn in session.turns:
            if any(is_allowed_extra(metric) for metric in turn.metrics):
                counts[turn.name] = counts.get(turn.name, 0) + 1
    if not counts:
        return []
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    tools = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in ranked[:8])
    tools += f" and {len(ranked) - 8} more tools" if len(ranked) > 8 else ""
    return [
        Text(f"{plural(sum(counts.values()), 'extra call')} allowed", style="green")
        + safe(f" by tool_choice ([matching] extra_calls): {tools}")
    ]


def count_line(report: AuditReport) -> list[Text]:
    """``18 sessions, 7 with a root cause, 2 with suspects only, 98 spans read, 7 turns not
    checked, 18 with inferred turn boundaries`` (the suspects part only when a session has
    nothing but suspects; then ``1 with doubts only``: a value left unverified on a step
    that reached no user; the last when a session's conversation turns were not stated by
    ``handle_conversation_turn`` spans)."""
    unchecked = sum(s.unchecked_turns for s in report.sessions)
    suspects = report.sessions_with_suspect_only
    doubts = report.sessions_with_doubts_only
    inferred = sum(1 for s in report.sessions if s.boundaries == "inferred")
    return [
        Text(
            f"{plural(len(report.sessions), 'session')}, {report.sessions_with_root_cause} "
            "with a root cause"
            + (f", {suspects} with suspects only" if suspects else "")
            + (f", {doubts} with doubts only" if doubts else "")
            + f", {plural(report.spans_read, 'span')} read"
            + (f", {unchecked} turns not checked" if unchecked else "")
            + (f", {inferred} with inferred turn boundaries" if inferred else "")
        )
    ] + ([Text(INFERRED_BOUNDARIES, style="dim")] if inferred else [])


# What "inferred turn boundaries" means, said under the count for a reader new to traces.
INFERRED_BOUNDARIES = (
    "  inferred turn boundaries: the trace does not mark where each exchange (a user "
    "message and the agent's answer to it) starts, so AEM took each top-level agent run as "
    "one exchange (one per trace without any); an agent framework that records "
    "handle_conversation_turn spans states them"
)


def unsupported_lines(report: AuditReport) -> list[Text]:
    """Says so when ``[verdicts] unsupported = "fail"`` was in force: then an unsupported
    value failed its turn (a root cause, not a suspect), which changes what the counts
    above mean; the default (``suspect``) goes unsaid."""
    if report.unsupported != "fail":
        return []
    return [
        Text("unsupported = fail", style="yellow")
        + Text(
            ": a value the trace neither supports nor contradicts failed its turn "
            '([verdicts] unsupported = "fail"); the default ranks it as a suspect'
        )
    ]


def no_case_lines(report: AuditReport) -> list[Text]:
    """A warning when cases were expected to match and none did (or no cases at all)."""
    if not report.sessions or any(s.case_found for s in report.sessions):
        return []
    return [
        Text("no case matched any session", style="yellow")
        + Text(
            ": checks that need a case (expected calls, facts, key points) did not run; "
            "give cases with --cases, their session_ids equal to the sessions' ids"
        )
    ]


def input_problem_lines(report: AuditReport) -> list[Text]:
    """The spans skipped by kind, then the first issues (the JSON report has them all)."""
    if not report.skipped.by_kind:
        return []
    kinds = ", ".join(f"{k}={v}" for k, v in sorted(report.skipped.by_kind.items()))
    lines = [
        Text("input problems", style="yellow")
        + Text(f": {report.skipped.total_spans_skipped} spans skipped; {kinds}")
    ]
    shown = report.issues[:20] + [i for s in report.sessions for i in s.issues][:20]
    for issue in shown:
        line = Text("  ") + safe(issue.where() or "-", style="dim")
        lines.append(line + safe(f" {issue.kind}: {issue.message}"))
    return lines


# The summary under the ranking, in print order: one builder per thing it reports.
SUMMARY_LINES: tuple[Callable[[AuditReport], list[Text]], ...] = (
    count_line,
    unsupported_lines,
    unverified_lines,
    allowed_lines,
    no_case_lines,
    input_problem_lines,
)


def render(
    report: AuditReport, console: Console, *, sessions: bool = True, every_session: bool = False
) -> None:
    """The whole view. ``sessions=False`` (``--summary``) leaves out every session table;
    ``every_session`` (``--all``) tables every session, not only the first failing ones."""
    if sessions:
        print_sessions(report, console, every_session=every_session)
    if report.ranking:
        console.print(ranking_table(report))
    else:  # an empty table reads as a rendering failure, not as "nothing failed"
        console.print("root causes: none (no turn failed a metric)")
    categories, headline = category_table(report), category_line(report)
    if categories is not None:
        console.print(categories)
    if headline is not None:
        console.print(headline)
    if report.suspects:
        console.print(ranking_table(report, kind="suspects"))
    if report.observations:
        console.print(ranking_table(report, observations=True))
    for build in SUMMARY_LINES:
        for line in build(report):
            console.print(line)


def render_diff(result: RunDiff, console: Console) -> None:
    """Root causes gone, new and changed, flagged turns and sessions; "no change" when
    the two runs found the same (an empty table reads as a rendering failure)."""
    if not (result.disappeared or result.appeared or result.changed) and (
        result.flagged_turns_before == result.flagged_turns_after
        and not result.sessions_fixed
        and not result.sessions_broken
    ):
        console.print(
            f"no change: the same root causes, {result.flagged_turns_after} flagged turns"
        )
        return
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
