"""``python -m aem.serve``: the serve command without the aem CLI.

Every ``ServeSettings`` field is a flag (``--session-idle-seconds 2``) that becomes a
``serve.<field>=<value>`` override, and every field of a registered sink's settings is a
``--<sink>-<field>`` flag (``--jsonl-path v.jsonl`` → ``serve.sinks.jsonl.path``), so
validation stays in one place.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aem.serve.command import serve_command
from aem.serve.settings import ServeSettings
from aem.sinks.registry import sink_types


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aem.serve", description=__doc__)
    parser.add_argument("--config", type=Path, default=None, help="AEM TOML config")
    parser.add_argument("--cases", type=Path, default=None, help="cases file (JSONL/YAML)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override, e.g. serve.grpc_port=0 or compare.x=1",
    )
    flags = _setting_flags()
    for flag, (_, help_text) in flags.items():
        parser.add_argument(f"--{flag}", dest=flag.replace("-", "_"), default=None, help=help_text)
    args = parser.parse_args(argv)
    overrides = list(args.set)
    for flag, (key, _) in flags.items():
        value = getattr(args, flag.replace("-", "_"))
        if value is not None:
            overrides.append(f"{key}={_toml_value(value)}")
    return serve_command(args.config, overrides, args.cases)


def _setting_flags() -> dict[str, tuple[str, str | None]]:
    """``flag name → (override key, help)`` for the serve settings and every sink's."""
    flags: dict[str, tuple[str, str | None]] = {}
    for name, field in ServeSettings.model_fields.items():
        if name != "sinks":
            flags[name.replace("_", "-")] = (f"serve.{name}", field.description)
    for sink, sink_type in sink_types().items():
        for name, field in sink_type.Settings.model_fields.items():
            flags[f"{sink}-{name}".replace("_", "-")] = (
                f"serve.sinks.{sink}.{name}",
                field.description or f"{sink} sink: {name}",
            )
    return flags


def _toml_value(raw: str) -> str:
    """Numbers, booleans and TOML literals pass through; anything else is a string."""
    from aem.settings import TomlError, parse_toml

    try:
        parse_toml(f"v = {raw}")
        return raw
    except TomlError:
        return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'


if __name__ == "__main__":
    raise SystemExit(main())
