"""``aem scorecard …``: check a config, list conversations, show versions, recompute.

Exit codes: 0 — fine; 1 — ``check`` refused the config; 2 — unreadable input or store.

Why ``--json`` is written with ``allow_nan=False``: ``Infinity`` and ``NaN`` are not JSON,
and a reader that accepts them would show a total nobody can have earned. Validation
keeps every number finite; should one still slip through, writing fails loudly instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from aem.model import AuditReport
from aem.scorecards.post_hoc import ScoredConversation, SessionScorer
from aem.scorecards.render import (
    render_conversations,
    render_scored,
    render_versions,
    render_violations,
)
from aem.scorecards.scorecard import (
    ScorecardError,
    build_scorecard,
    load_scorecard,
    read_and_check,
)
from aem.scorecards.versions import ScorecardStore
from aem.store import Store, StoreError, default_store_path
from aem.terminaltext import escape_controls, safe

app = typer.Typer(no_args_is_help=True, help="Level-2 scorecards: totals of pipeline steps")
EXIT_OK, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2

StoreOption = Annotated[
    Path | None, typer.Option("--store", help="results store (default: $AEM_STORE or aem.sqlite)")
]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON to stdout")]
ScorecardOption = Annotated[
    Path | None, typer.Option(help="also total pipeline steps with this scorecard config")
]


def _fail(message: str) -> typer.Exit:
    """``error: <message>`` on stderr, unwrapped, with no markup read from the message."""
    text = escape(escape_controls(message))
    Console(stderr=True, soft_wrap=True, highlight=False).print(f"[red]error:[/] {text}")
    return typer.Exit(EXIT_BAD_INPUT)


def strict_json(data: object) -> str:
    """Indented JSON that refuses ``NaN`` and ``Infinity`` (ValueError) instead of writing them."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


def open_store(path: Path | None) -> ScorecardStore:
    """The scorecard tables of the store at ``path`` (or the default); exits 2 on failure."""
    try:
        return ScorecardStore(Store(path or default_store_path()))
    except StoreError as exc:
        raise _fail(str(exc)) from exc


@app.command()
def check(
    config: Annotated[Path, typer.Argument(help="scorecard config (TOML or YAML)")],
    pipeline: Annotated[
        Path | None, typer.Option(help="pipeline definition (default: the config's `definition`)")
    ] = None,
) -> None:
    """Validate a scorecard config against its pipeline; every violation is listed."""
    try:
        parsed, definition, violations = read_and_check(config, pipeline)
    except ScorecardError as exc:
        raise _fail(str(exc)) from exc
    if violations:
        render_violations(violations, Console())
        raise typer.Exit(EXIT_REFUSED)
    if parsed.level2 is None:
        Console().print(safe(f"ok: pipeline {definition.name!r} has no level-2 config (not QA)"))
        return
    card = build_scorecard(config, parsed, definition, violations)
    steps = ", ".join(
        f"{p.step.name} {p.maximum:g}×{p.weight:g}" + ("" if p.counts else " (not counted)")
        for p in card.participants
    )
    Console().print(
        safe(
            f"ok: pipeline {card.pipeline!r}, scale {card.scale_min:g}–{card.scale_max:g} step "
            f"points, pass at {card.pass_threshold:g}, config {card.config_hash}\n  steps: {steps}"
        ),
        highlight=False,
    )


@app.command()
def show(
    store: StoreOption = None,
    pipeline: Annotated[str | None, typer.Option(help="only this pipeline (its name)")] = None,
    json_: JsonOption = False,
) -> None:
    """List conversations: state, total, 0–100 (as fixed at completion), passed, blocking."""
    states = open_store(store).conversations(pipeline)
    if json_:
        sys.stdout.write(strict_json([s.model_dump(mode="json") for s in states]) + "\n")
        return
    render_conversations(states, Console())


@app.command()
def versions(
    conversation: Annotated[str, typer.Argument(help="conversation (session) id")],
    store: StoreOption = None,
    pipeline: Annotated[str | None, typer.Option(help="only this pipeline (its name)")] = None,
    json_: JsonOption = False,
) -> None:
    """Every version of a conversation's total, with the config hash each one used."""
    found = open_store(store).versions(pipeline, conversation)
    if json_:
        sys.stdout.write(strict_json([v.model_dump(mode="json") for v in found]) + "\n")
        return
    if not found:
        raise _fail(f"no total stored for conversation {conversation!r}")
    render_versions(found, Console())


@app.command()
def recompute(
    config: Annotated[Path, typer.Argument(help="scorecard config (TOML or YAML)")],
    pipeline: Annotated[Path | None, typer.Option(help="pipeline definition file")] = None,
    store: StoreOption = None,
) -> None:
    """Recompute every stored conversation of the pipeline from its stored step results.

    A total that changes (the config changed) becomes a new version; old ones are kept.
    """
    from aem.scorecards.totals import compute_total

    try:
        card = load_scorecard(config, pipeline)
    except ScorecardError as exc:
        raise _fail(str(exc)) from exc
    scorecards = open_store(store)
    scored = []
    for state in scorecards.conversations(card.pipeline):
        results = scorecards.results(card.pipeline, state.conversation)
        total = compute_total(card, state.conversation, results)
        created = scorecards.record(total, results)
        latest = created or state.latest
        scored.append(
            ScoredConversation(
                total=total,
                version=latest.version if latest and total.state != "pending" else None,
                new_version=created is not None,
            )
        )
    render_scored(scored, Console())


def audit_scorer(config: Path, store: Path | None) -> SessionScorer:
    """The ``aem audit --scorecard`` hook: a validated scorecard over the store.

    Raises :class:`ScorecardError` (the CLI exits 2) when the config is refused.
    """
    return SessionScorer(load_scorecard(config, None), open_store(store))


def report_with_totals(report_json: str, scorer: SessionScorer | None) -> str:
    """The audit's JSON report with a ``scorecards`` list added (only with --scorecard)."""
    if scorer is None:
        return report_json
    data = json.loads(report_json)
    data["scorecards"] = [s.model_dump(mode="json") for s in scorer.scored]
    return strict_json(data)


def add_scorecard_issues(report: AuditReport, scorer: SessionScorer | None) -> None:
    """The scorecard's input issues (bad step spans, unknown steps) into the audit report:
    each with its session when the report has it, counted in ``skipped.by_kind``."""
    if scorer is None:
        return
    sessions = {s.session_id: s for s in report.sessions}
    for issue in scorer.issues:
        held = sessions.get(issue.session_id or "")
        (held.issues if held is not None else report.issues).append(issue)
        by_kind = report.skipped.by_kind
        by_kind[issue.kind] = by_kind.get(issue.kind, 0) + 1


def print_totals(scorer: SessionScorer | None, console: Console) -> None:
    """The totals table after the audit's terminal report (nothing without --scorecard)."""
    if scorer is not None:
        render_scored(scorer.scored, console)
