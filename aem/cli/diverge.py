"""``aem diverge``: where a re-run of the same tasks first did something different.

Why a sibling of ``aem diff`` rather than an option of it: ``diff`` compares two *reports*
(verdicts); ``diverge`` reads two runs' *traces*, because a report does not keep the
arguments a divergence is found by.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer  # noqa: TID251
from rich.console import Console
from rich.table import Table

from aem.cli.audit import ConfigOption, SetOption
from aem.cli.errors import fail
from aem.cli.exit_codes import ExitCode
from aem.config import load_config
from aem.evaluate import Evaluator
from aem.foundation.model import InputIssue, Session
from aem.foundation.terminaltext import escape_controls
from aem.report.terminal import output_console
from aem.runs.divergence import RunDivergence, diverge_runs
from aem.settings import AemConfig
from collectors.reading import SessionReading


def read_sessions(path: Path, config: AemConfig, issues: list[InputIssue]) -> list[Session]:
    """Every session under ``path``, assembled and built as ``aem audit`` builds them."""
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    reading = SessionReading(config.assembly, issues)
    builder = Evaluator(config, metrics=[])
    return [builder.build(closed) for group in reading.files([str(path)]) for closed in group]


def render_divergence(result: RunDivergence, console: Console) -> None:
    """One row per diverged session: the step, each run's turn there, and why."""
    if not result.diverged:
        same = len(result.sessions)
        console.print(f"no divergence: {same} session(s) paired, every step alike")
    else:
        table = Table(title="first divergent turn per session", show_lines=False)
        for column in ("session (before → after)", "step", "turn before", "turn now", "why"):
            table.add_column(column, overflow="fold")
        for found in result.diverged:
            first = found.first
            assert first is not None
            table.add_row(
                f"{found.before_session} → {found.after_session}",
                str(first.step),
                first.before_turn_id or "–",
                first.after_turn_id or "–",
                first.reason,
            )
        console.print(table)
        alike = len(result.sessions) - len(result.diverged)
        console.print(f"{len(result.diverged)} diverged, {alike} alike")
    for side, ids in (("earlier", result.only_before), ("later", result.only_after)):
        if ids:
            console.print(f"only in the {side} run (no pair found): {', '.join(ids)}")


def _write_compare(
    before: Path, after: Path, config: AemConfig, result: RunDivergence, page: Path
) -> None:
    """Both runs audited, then the compare page with the divergence at its top."""
    from aem.audit import audit_paths
    from aem.report.html import render_compare, write_html

    earlier = audit_paths([str(before)], config=config)
    later = audit_paths([str(after)], config=config)
    write_html(render_compare(earlier, later, divergence=result), page)
    Console(stderr=True).print(f"wrote {page}")


def diverge(
    before: Annotated[Path, typer.Argument(help="traces of the earlier run (file or folder)")],
    after: Annotated[Path, typer.Argument(help="traces of the later run (file or folder)")],
    json_: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    html: Annotated[
        Path | None,
        typer.Option(help="also audit both runs and write the compare page, divergence first"),
    ] = None,
    config: ConfigOption = None,
    set_: SetOption = None,
) -> None:
    """Where did the later run first go a different way? Sessions are paired by session id,
    else by their first user message; turns by kind, tool and arguments (compared as AEM
    compares values; calls one decision made together in any order).

    Exit code 1 when a session diverged, else 0; 2 when either run has no session that
    can be read (an empty or unreadable file is not a run that did not diverge).
    """
    issues: list[InputIssue] = []
    try:
        settings = load_config(config, set_ or [])
        earlier = read_sessions(before, settings, issues)
        later = read_sessions(after, settings, issues)
    except (OSError, ValueError) as exc:
        fail(exc)
    for issue in issues:
        Console(stderr=True).print(f"skipped: {escape_controls(issue.message)}", markup=False)
    for path, sessions, which in ((before, earlier, "earlier"), (after, later, "later")):
        if not sessions:  # "no divergence" would be a verdict on nothing
            seen = " (see the skipped input above)" if issues else ""
            fail(f"{path}: no session could be read from the {which} run{seen}; nothing to compare")
    result = diverge_runs(earlier, later)
    if html is not None:
        _write_compare(before, after, settings, result, html)
    if json_:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        render_divergence(result, output_console())
    raise typer.Exit(ExitCode.FOUND if result.diverged else ExitCode.OK)
