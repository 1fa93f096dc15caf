"""The ``aem`` command line (typer): the composition root, and the only place with typer.

One module per command or command group, wired here: ``audit`` (with ``pull`` for
``--from``/``--since``/``--sink``/``--settle`` and ``engines`` for ``--workers``/
``--engine``), ``serve``, ``diff``/``report``/``calibrate`` (``runs``), ``diverge``,
``agreement``, ``config`` (``config_cmd``), ``taxonomy`` (with ``taxonomy_suggest``),
``scorecard`` (``scorecards``), and ``test``/``threshold``/``checks`` (``datatests``).
Each parses options, calls plain functions of the package that does the work, prints,
and exits with a code of the one table in :mod:`aem.cli.exit_codes`, which every
command's ``--help`` prints; :mod:`aem.cli.errors` turns an exception into its code.
The CLI sits on the top floor (docs/architecture.md): it may import any package below
it, ``collectors`` included, and nothing imports it.
"""

from __future__ import annotations

from typing import Annotated

import typer  # noqa: TID251

from aem.cli.agreement import agreement_command
from aem.cli.audit import audit
from aem.cli.config_cmd import config_app
from aem.cli.datatests import checks_command, test_app, threshold_app
from aem.cli.diverge import diverge
from aem.cli.errors import DEBUG_KEY, AemGroup
from aem.cli.exit_codes import ExitCode
from aem.cli.runs import calibrate, diff, report
from aem.cli.scorecards import scorecard_app
from aem.cli.serve import serve
from aem.cli.taxonomy import taxonomy_app

__all__ = ["ExitCode", "app", "main"]

app = typer.Typer(
    cls=AemGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Agent Evaluation Metric: per-turn metrics and root causes from OpenTelemetry "
    "traces.\n\nInput skipped along the way (a bad record, an unreadable file) is reported "
    "on stderr and leaves the exit code alone; aem audit --strict makes it 2.",
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
        raise typer.Exit(ExitCode.OK)


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
