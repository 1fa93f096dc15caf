"""The ``aem`` command line (typer): one module per command group, wired here.

Exit codes are the same for every command (``aem.cli.errors``): 0 nothing found,
1 root causes found or a gate failed, 2 bad usage / unreadable input / invalid
configuration, cases or plug-in (and, for ``aem audit --strict``, any input skipped),
3 an internal error (rerun with ``--debug``).
The CLI is the composition root: it is the one part of ``aem`` allowed to reach into
``collectors`` (the readers for ``audit``, the live receivers for ``serve``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from aem.cli.agreement import agreement_command
from aem.cli.audit import audit
from aem.cli.config_cmd import config_app
from aem.cli.diverge import diverge
from aem.cli.errors import DEBUG_KEY, EXIT_BAD_INPUT, EXIT_OK, EXIT_ROOT_CAUSES, AemGroup
from aem.cli.runs import calibrate, diff, report
from aem.cli.serve import serve
from aem.cli.taxonomy import taxonomy_app
from aem.datatests.commands import checks_command, test_app, threshold_app
from aem.scorecards.commands import app as scorecard_app

__all__ = ["EXIT_BAD_INPUT", "EXIT_OK", "EXIT_ROOT_CAUSES", "app", "main"]

app = typer.Typer(
    cls=AemGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Agent Evaluation Metric: per-turn metrics and root causes from OpenTelemetry traces.\n\n"
    "Exit codes: 0 nothing found; 1 root causes found (or a gate failed); 2 bad usage, "
    "unreadable input, invalid configuration, cases or plug-in; 3 internal error "
    "(rerun with --debug for the traceback). Input skipped along the way (a bad record, "
    "an unreadable file) is reported on stderr and leaves the code alone; "
    "aem audit --strict makes it 2.",
)
app.command()(audit)
app.command()(serve)
app.command()(calibrate)
app.command()(diff)
app.command()(diverge)
app.command("agreement")(agreement_command)
app.command()(report)
app.command("checks")(checks_command)
app.add_typer(config_app, name="config")
app.add_typer(taxonomy_app, name="taxonomy")
app.add_typer(scorecard_app, name="scorecard")
app.add_typer(test_app, name="test")
app.add_typer(threshold_app, name="threshold")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"aem {version('aem')}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool, typer.Option("--debug", help="show the traceback of an internal error")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """Evaluate LLM agents from their OpenTelemetry traces."""
    ctx.meta[DEBUG_KEY] = debug


def main() -> None:
    """The console script ``aem``."""
    app()


if __name__ == "__main__":
    main()
