"""``aem config show``: the effective configuration and where each value came from."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aem.cli.audit import ConfigOption, SetOption
from aem.cli.errors import fail
from aem.config import ConfigError, config_sources

config_app = typer.Typer(no_args_is_help=True, help="Inspect the configuration.")


@config_app.command("show")
def show(
    config: ConfigOption = None,
    set_: SetOption = None,
    json_: Annotated[
        bool, typer.Option("--json", help="print [{key, value, source}] as JSON")
    ] = False,
) -> None:
    """Print every effective setting and its source: default, file or --set.

    The file and --set overrides are validated exactly as aem audit validates them, so
    a misspelt key fails here with the same message (exit code 2).
    """
    try:
        rows = config_sources(config, set_ or [])
    except (ConfigError, OSError) as exc:
        fail(exc)
    if json_:
        payload = [{"key": k, "value": v, "source": s} for k, v, s in rows]
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    table = Table("setting", "value", "source", box=None, pad_edge=False)
    for key, value, source in rows:
        table.add_row(escape(key), escape(json.dumps(value)), source)
    Console(soft_wrap=True).print(table)
