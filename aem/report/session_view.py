"""The per-session part of the terminal view: which sessions get a table, the tables,
one explanation line per failed turn, and the legend of the labels they use.

Why a selection: a run of 80 sessions printed every table (3,700 lines) and buried the
ranking. Beyond :data:`SHOWN_SESSIONS` sessions the view tables only the first sessions
with a root cause, then (room left) those with only suspects, and says how many it left
out; ``aem audit --all`` tables every session, and the ranking and the summary always
count them all.

Why suspects have a colour and a line of their own: a ``suspect`` turn is where to look
when nothing is proven (a value the trace neither supports nor contradicts); shown in
the red or green of a verdict it would read as a failure or as fine, and it is neither.

Why names do not wrap: a metric name folded at a column edge (``correctness.t`` /
``ruthfulness``) cannot be searched for or copied. A cell with several metrics puts one
per line, so a table is as narrow as its longest name; rich folds a column only when
the table cannot fit, which piped output (120 columns or more) leaves to tables of very
long names, and a narrow terminal to what it cannot show otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from aem.foundation.model import AuditReport, Label, Outcome, SessionReport, TurnVerdict
from aem.foundation.terminaltext import fits
from aem.metrics.tool_set import is_allowed_extra
from aem.report.safe_text import cut, plural, safe

# Sessions a run may have before the view tables only its failing ones (and at most this
# many of those): ten tables are what a reader reads before turning to the ranking.
SHOWN_SESSIONS = 10

NOT_CHECKED = "– not checked"

# Neither a verdict's red, yellow or green nor the cyan of unverified claim counts.
SUSPECT_STYLE = "bold magenta"

_LABEL_STYLE = {
    Label.OK: "green",
    Label.ROOT_CAUSE: "bold red",
    Label.PRIOR_ACTION_FAILED: "yellow",
    Label.SUSPECT: SUSPECT_STYLE,
}

# What each label means, in the order the legend lists them (most urgent first).
_LEGEND = (
    ("root_cause", "failed, and nothing it built on failed: fix this"),
    ("prior_action_failed ← tN", "failed after turn tN failed: fixing tN may fix it"),
    (
        "suspect",
        "nothing proven; a value the trace neither supports nor contradicts: look here first",
    ),
    ("ok", "no metric failed"),
    (NOT_CHECKED, "every metric skipped the turn: nothing was checked"),
)


@dataclass(frozen=True)
class SessionSelection:
    """The sessions the view tables, and how many sessions with turns it leaves out
    (``omitted_failing`` of them with a root cause, ``omitted_suspect`` with only
    suspects)."""

    shown: list[SessionReport]
    omitted: int
    omitted_failing: int
    omitted_suspect: int = 0


def select_sessions(
    report: AuditReport, *, every_session: bool = False, limit: int = SHOWN_SESSIONS
) -> SessionSelection:
    """Every session with turns when asked or when there are at most ``limit`` of them;
    otherwise the first ``limit`` sessions with a root cause, then, while room is left,
    those with only suspects (a proof outranks a doubt), each in report order."""
    with_turns = [s for s in report.sessions if s.turns]
    if every_session or len(with_turns) <= limit:
        return SessionSelection(with_turns, 0, 0)
    failing = [s for s in with_turns if s.root_causes]
    suspect_only = [s for s in with_turns if s.suspects and not s.root_causes]
    shown = (failing + suspect_only)[:limit]
    room = max(0, limit - len(failing))
    return SessionSelection(
        shown,
        len(with_turns) - len(shown),
        max(0, len(failing) - limit),
        len(suspect_only) - min(room, len(suspect_only)),
    )


def omitted_line(selection: SessionSelection) -> Text | None:
    """``not shown: 30 sessions (25 with a root cause, 2 with suspects only, 3 without);
    aem audit --all …``."""
    if not selection.omitted:
        return None
    failing, suspect = selection.omitted_failing, selection.omitted_suspect
    rest = selection.omitted - failing - suspect
    parts = [f"{failing} with a root cause"] if failing else []
    parts += [f"{suspect} with suspects only"] if suspect else []
    parts += [f"{rest} without"] if rest and parts else []
    kinds = f" ({', '.join(parts)})" if parts else " without a root cause"
    return Text(
        f"not shown: {plural(selection.omitted, 'session')}{kinds}, counted in the ranking "
        "and the summary; aem audit --all prints every session",
        style="yellow",
    )


def session_table(report: SessionReport) -> Table:
    title = Text("session ") + safe(report.session_id)
    notes = []
    if report.session_key_fallback:
        notes.append("no session attribute: grouped by trace id")
    if not report.case_found:
        notes.append("no case")
    if report.cut:
        notes.append("cut at max lifetime")
    if report.runs > 1:
        notes.append(f"{report.runs} runs under one conversation id: a re-run appended?")
    table = Table(title=title, caption="; ".join(notes) or None, title_justify="left")
    # Fits whole, or the caller prints the turn list instead (print_session): a table
    # squeezed below its width would fold an identifier in two.
    cells = [_row(turn) for turn in report.turns]
    table.add_column("turn", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("name", no_wrap=True)
    table.add_column("label", no_wrap=True)
    table.add_column("failed metrics", no_wrap=True)
    for cell in cells:
        table.add_row(*cell)
    return table


def _row(turn: TurnVerdict) -> tuple[Text, Text, Text, Text, Text]:
    label = turn_label(turn)
    if turn.inherited_from:
        label.append_text(safe(f" ← {', '.join(turn.inherited_from)}", style="dim"))
    return safe(turn.turn_id), safe(turn.kind.value), safe(turn.name), label, metrics_cell(turn)


def turn_lines(report: SessionReport) -> list[Text]:
    """The table as one line per turn, for a terminal narrower than the table: lines wrap
    at their spaces, so no metric name, id or turn name is ever cut in two.

    ``t2 tool_call get_orders: prior_action_failed ← t1 · argument_validity``
    """
    lines = [Text("session ") + safe(report.session_id)]
    if report.runs > 1:
        lines[0].append(f" ({report.runs} runs under one conversation id: a re-run appended?)")
    for turn_id, kind, name, label, metrics in map(_row, report.turns):
        line = Text("  ") + turn_id + Text(" ") + kind + Text(" ") + name + Text(": ") + label
        failed = metrics.plain.replace("\n", ", ")
        if failed:
            line.append_text(Text(" · ") + Text(failed, style=metrics.style))
        lines.append(line)
    return lines


def metrics_cell(turn: TurnVerdict) -> Text:
    """The failed metrics, one per line; on a suspect turn (none failed) the metrics that
    left it unverified, in the suspect colour, so the column still says where to look."""
    if turn.label is Label.SUSPECT:
        names = [m.name for m in turn.metrics if m.outcome is Outcome.UNVERIFIED]
        return safe("\n".join(f"{name} ?" for name in names), style=SUSPECT_STYLE)
    return safe("\n".join(turn.failed_metrics))


def turn_label(turn: TurnVerdict) -> Text:
    """The turn's label; an "ok" where every metric skipped reads as not checked (``–``
    and the number of skips), so a pass and the absence of any check look different."""
    why = turn.unchecked_reason if turn.label is Label.OK else None
    if why is not None:
        return Text(f"{NOT_CHECKED} ({why})", style="dim")
    return Text(turn.label.value, style=_LABEL_STYLE[turn.label])


def root_cause_reasons(turn: TurnVerdict) -> list[Text]:
    """Why a root cause failed, one line per failed metric."""
    lines = []
    for metric in turn.metrics:
        if metric.outcome is Outcome.FAIL:
            line = safe(f"  {turn.turn_id} ", style="bold red")
            line.append_text(safe(f"{metric.name}: ", style="bold"))
            line.append_text(safe(cut(metric.explanation, 300)))
            lines.append(line)
    return lines


def suspect_reasons(turn: TurnVerdict) -> list[Text]:
    """Why a turn is a suspect, one line per metric that left it unverified: the value
    nothing confirmed, as the metric explains it (no fail: nothing to fix yet)."""
    lines = []
    for metric in turn.metrics:
        if metric.outcome is Outcome.UNVERIFIED:
            line = safe(f"  {turn.turn_id} suspect ", style=SUSPECT_STYLE)
            line.append_text(safe(f"{metric.name}: ", style="bold"))
            line.append_text(safe(cut(metric.explanation, 300)))
            lines.append(line)
    return lines


def allowed_reasons(turn: TurnVerdict) -> list[Text]:
    """Each extra call ``tool_choice`` let through (``[matching] extra_calls``), with why
    its tool counted as a look-up: a pass, so nothing else in the table flags it."""
    lines = []
    for metric in turn.metrics:
        if is_allowed_extra(metric):
            line = safe(f"  {turn.turn_id} ", style="green")
            line.append_text(safe(f"{metric.name}: ", style="bold"))
            line.append_text(safe(cut(metric.explanation, 300)))
            lines.append(line)
    return lines


def inherited_reason(turn: TurnVerdict, report: SessionReport) -> Text:
    """``t4 inherits t2 (tool_execution): own failure correctness.completeness: …``: the
    turns it inherits from with the metric each failed, the value it consumed from a
    failed turn (``restates '€30.00' from t3``), then the turn's own first failed metric
    and why (the table lists all of them; the JSON report has every reason)."""
    named = {cause.turn_id: cause.metrics[0] for cause in report.root_causes if cause.metrics}
    roots = [f"{root} ({named[root]})" if root in named else root for root in turn.inherited_from]
    line = safe(f"  {turn.turn_id} ", style="yellow")
    line.append_text(safe(f"inherits {', '.join(roots) or 'an earlier failure'}"))
    along = [i.reason for i in report.inheritances if i.target == turn.turn_id]
    if along:  # passed its own checks: says which value it took from which failed turn
        line.append_text(safe(f": {'; '.join(along[:2])}"))
    own = [m for m in turn.metrics if m.outcome is Outcome.FAIL]
    if own:
        more = f" (and {len(own) - 1} more)" if len(own) > 1 else ""
        line.append_text(safe(f": own failure {own[0].name}{more}: ", style="bold"))
        line.append_text(safe(cut(own[0].explanation, 120)))
    return line


def print_session(report: SessionReport, console: Console) -> None:
    """A session's table, then the flagged turns' reasons: a line per failed metric of a
    root cause, one line per turn that inherited a failure, a line per metric that left
    a suspect unverified, a line per extra call ``tool_choice`` allowed."""
    table = session_table(report)
    if fits(console, table):
        console.print(table)
    else:
        for line in turn_lines(report):
            console.print(line)
    for turn in report.turns:
        if turn.label is Label.ROOT_CAUSE:
            for line in root_cause_reasons(turn):
                console.print(line)
        elif turn.label is Label.PRIOR_ACTION_FAILED:
            console.print(inherited_reason(turn, report))
        elif turn.label is Label.SUSPECT:
            for line in suspect_reasons(turn):
                console.print(line)
        for line in allowed_reasons(turn):
            console.print(line)
    console.print()


def legend(sessions: Sequence[SessionReport]) -> Table | None:
    """What each label the tables of ``sessions`` show means, printed once per run
    (``None`` when no table was printed)."""
    shown = {_legend_key(turn) for session in sessions for turn in session.turns}
    entries = [(name, meaning) for name, meaning in _LEGEND if name in shown]
    if not entries:
        return None
    grid = Table.grid(padding=(0, 2))
    for _ in range(3):
        grid.add_column(no_wrap=True)
    for position, (name, meaning) in enumerate(entries):
        grid.add_row("labels:" if position == 0 else "", Text(name, style="bold"), meaning)
    return grid


def _legend_key(turn: TurnVerdict) -> str:
    if turn.label is Label.PRIOR_ACTION_FAILED:
        return "prior_action_failed ← tN"
    if turn.label is Label.OK and not turn.checked:
        return NOT_CHECKED
    return turn.label.value


def print_sessions(report: AuditReport, console: Console, *, every_session: bool) -> None:
    """The selected sessions' tables and reasons, the sessions with no turns (one line,
    not an empty table that reads as "all fine"), what was left out, the legend."""
    selection = select_sessions(report, every_session=every_session)
    for session in selection.shown:
        print_session(session, console)
    empty = [s.session_id for s in report.sessions if not s.turns]
    if empty:
        line = safe(f"{plural(len(empty), 'session')} with no turns to evaluate: ", "dim")
        console.print(line + safe(", ".join(empty[:10]) + (", …" if len(empty) > 10 else "")))
    omitted, labels = omitted_line(selection), legend(selection.shown)
    if omitted is not None:
        console.print(omitted)
    if labels is not None:
        console.print(labels)
        console.print()
