"""``aem serve``: the live evaluator, its settings listed in ``--help`` with defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer  # noqa: TID251

from aem.cli.audit import CasesOption
from aem.cli.exit_codes import ExitCode

# The settings a first deployment sets; every other one is in docs/deploy.md.
_SERVE_KEYS = (
    "host",
    "grpc_port",
    "http_port",
    "allow_non_loopback",
    "spool_path",
    "bearer_token",
    "tls_cert_file",
    "tls_key_file",
    "sinks",
)


def serve_help() -> str:
    """The ``aem serve`` help: what it does, then each key setting with its default.

    Built from the settings model, so a changed default cannot leave the help behind.
    """
    from aem.serve.settings import ServeSettings

    lines = [
        "Receive OTLP over gRPC and HTTP, evaluate each finished session live, and send "
        "verdicts to the configured sinks.",
        "",
        "Settings: the [serve] table of --config, or --set serve.KEY=VALUE. Key ones "
        "(default in brackets):",
        "",
        "\b",
    ]
    fields = ServeSettings.model_fields
    for key in _SERVE_KEYS:
        field = fields[key]
        default = field.get_default(call_default_factory=True)
        shown = "none" if default is None or default == {} else str(default)
        lines.append(f"  serve.{key} [{shown}]: {field.description or ''}")
    lines += [
        "",
        "Sinks: serve.sinks.jsonl.path=FILE; serve.sinks.otlp.endpoint=URL (with "
        "serve.sinks.otlp.signals = spans, logs or both); serve.sinks.phoenix.url=URL. "
        "Guides: docs/deploy.md, docs/integrations/.",
    ]
    return "\n".join(lines)


def serve(
    config: Annotated[
        Path | None, typer.Option(help="configuration file (TOML, its [serve] table)")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", metavar="KEY=VALUE", help="override: serve.key=value or key.path=value"
        ),
    ] = None,
    cases: CasesOption = None,
) -> None:
    """Receive OTLP, evaluate finished sessions live (settings: see above)."""
    from aem.serve.command import serve_command

    code = serve_command(config, set_ or [], cases)
    # serve_command says 2 when the server cannot start (a port in use, an unusable
    # spool): for the CLI that is the operator's set-up to fix, not root causes found.
    raise typer.Exit(ExitCode.OK if code == ExitCode.OK else ExitCode.BAD_INPUT)


serve.__doc__ = serve_help()
