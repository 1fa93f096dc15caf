"""``aem config show``: the effective configuration and where each value came from, and
every plug-in the installed distributions register."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer  # noqa: TID251
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aem.cli.audit import ConfigOption, SetOption
from aem.cli.errors import fail
from aem.config import ConfigError, config_sources, loaded_plugins
from aem.foundation.terminaltext import fits

config_app = typer.Typer(no_args_is_help=True, help="Inspect the configuration.")


@config_app.command("show")
def show(
    config: ConfigOption = None,
    set_: SetOption = None,
    json_: Annotated[
        bool, typer.Option("--json", help="print [{key, value, source}] as JSON")
    ] = False,
    plugins: Annotated[
        bool,
        typer.Option(
            "--plugins",
            help="only the plug-ins: kind, name, module, distribution (and why one that "
            "does not load fails); with --json as [{kind, name, module, distribution}]",
        ),
    ] = False,
) -> None:
    """Print every effective setting and its source (default, file or --set), then every
    loaded plug-in with its kind, name and where it came from.

    The file and --set overrides are validated exactly as aem audit validates them, so
    a misspelt key fails here with the same message (exit code 2).
    """
    if plugins:
        _show_plugins(json_)
        return
    try:
        rows = config_sources(config, set_ or [])
    except (ConfigError, OSError) as exc:
        fail(exc)
    if json_:
        payload = [{"key": k, "value": v, "source": s} for k, v, s in rows]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    # A setting's name is never cut (it is what --set takes); the value wraps instead.
    table = Table(box=None, pad_edge=False)
    table.add_column("setting", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", no_wrap=True)
    for key, value, source in rows:
        table.add_row(escape(key), escape(json.dumps(value)), source)
    console = Console(soft_wrap=True)
    console.print(table)
    console.print()
    _plugin_table(console)


def _show_plugins(json_: bool) -> None:
    if json_:
        sys.stdout.write(json.dumps(loaded_plugins(), indent=2) + "\n")
    else:
        _plugin_table(Console(soft_wrap=True))


def _plugin_table(console: Console) -> None:
    """One row per plug-in; one that does not load says why in its last column. On a
    terminal narrower than the table, one line per plug-in wrapped at its spaces: a name
    or a module path cut in two cannot be searched for."""
    rows = loaded_plugins()
    table = Table(box=None, pad_edge=False)
    for header in ("plug-in kind", "name", "module", "distribution"):
        table.add_column(header, no_wrap=True)
    table.add_column("problem", overflow="fold")
    for row in rows:
        table.add_row(
            *(escape(row[k]) for k in ("kind", "name", "module", "distribution")),
            escape(row.get("error", "")),
        )
    if fits(console, table):
        console.print(table)
        return
    for row in rows:
        problem = f" — {row['error']}" if row.get("error") else ""
        line = f"{row['kind']} {row['name']}: {row['module']} ({row['distribution']}){problem}"
        console.print(line, markup=False, highlight=False, soft_wrap=False)
