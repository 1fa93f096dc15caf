"""``aem scorecard …``: check a config, list conversations, show versions, recompute;
and the ``--scorecard`` and ``--store`` options of ``aem audit``.

A refused config (``check``) is :attr:`ExitCode.FOUND`; an unreadable config or store is
:attr:`ExitCode.BAD_INPUT`. What each command changes is decided in
:mod:`aem.scorecards.operations`; this module parses options, prints, picks the code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer  # noqa: TID251
from rich.console import Console

from aem.cli.errors import fail
from aem.cli.exit_codes import ExitCode
from aem.foundation.terminaltext import escape_controls, safe
from aem.scorecards.operations import open_scorecard_store, recompute, strict_json
from aem.scorecards.render import (
    render_conversations,
    render_scored,
    render_versions,
    render_violations,
)
from aem.scorecards.scorecard import (
    Scorecard,
    ScorecardError,
    build_scorecard,
    load_scorecard,
    read_and_check,
)
from aem.scorecards.versions import ScorecardStore
from aem.store import StoreError

scorecard_app = typer.Typer(
    no_args_is_help=True, help="Level-2 scorecards: totals of pipeline steps"
)

StoreOption = Annotated[
    Path | None, typer.Option("--store", help="results store (default: $AEM_STORE or aem.sqlite)")
]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON to stdout")]
ScorecardOption = Annotated[
    Path | None, typer.Option(help="also total pipeline steps with this scorecard config")
]


def _fail(message: str) -> NoReturn:
    """``error: <message>`` and exit 2; control characters a file or span put in the
    message print as escapes."""
    fail(escape_controls(message), ExitCode.BAD_INPUT)


def _store(path: Path | None) -> ScorecardStore:
    try:
        return open_scorecard_store(path)
    except StoreError as exc:
        _fail(str(exc))


def _card(config: Path, pipeline: Path | None) -> Scorecard:
    try:
        return load_scorecard(config, pipeline)
    except ScorecardError as exc:
        _fail(str(exc))


@scorecard_app.command()
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
        _fail(str(exc))
    if violations:
        render_violations(violations, Console())
        raise typer.Exit(ExitCode.FOUND)
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


@scorecard_app.command()
def show(
    store: StoreOption = None,
    pipeline: Annotated[str | None, typer.Option(help="only this pipeline (its name)")] = None,
    json_: JsonOption = False,
) -> None:
    """List conversations: state, total, 0–100 (as fixed at completion), passed, blocking."""
    states = _store(store).conversations(pipeline)
    if json_:
        sys.stdout.write(strict_json([s.model_dump(mode="json") for s in states]) + "\n")
        return
    render_conversations(states, Console())


@scorecard_app.command()
def versions(
    conversation: Annotated[str, typer.Argument(help="conversation (session) id")],
    store: StoreOption = None,
    pipeline: Annotated[str | None, typer.Option(help="only this pipeline (its name)")] = None,
    json_: JsonOption = False,
) -> None:
    """Every version of a conversation's total, with the config hash each one used."""
    found = _store(store).versions(pipeline, conversation)
    if json_:
        sys.stdout.write(strict_json([v.model_dump(mode="json") for v in found]) + "\n")
        return
    if not found:
        _fail(f"no total stored for conversation {conversation!r}")
    render_versions(found, Console())


@scorecard_app.command("recompute")
def recompute_command(
    config: Annotated[Path, typer.Argument(help="scorecard config (TOML or YAML)")],
    pipeline: Annotated[Path | None, typer.Option(help="pipeline definition file")] = None,
    store: StoreOption = None,
) -> None:
    """Recompute every stored conversation of the pipeline from its stored step results.

    A total that changes (the config changed) becomes a new version; old ones are kept.
    """
    card = _card(config, pipeline)
    render_scored(recompute(card, _store(store)), Console())


__all__ = ["ScorecardOption", "StoreOption", "scorecard_app"]
