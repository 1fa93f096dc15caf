"""``python -m collectors.live``: the serve command without the aem CLI.

Every ``ServeSettings`` field is a flag (``--session-idle-seconds 2``) that becomes a
``serve.<field>=<value>`` override, so validation stays in one place.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from collectors.live.command import serve_command
from collectors.live.settings import ServeSettings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m collectors.live", description=__doc__)
    parser.add_argument("--config", type=Path, default=None, help="AEM TOML config")
    parser.add_argument("--cases", type=Path, default=None, help="cases file (JSONL/YAML)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override, e.g. serve.grpc_port=0 or compare.x=1",
    )
    for name, field in ServeSettings.model_fields.items():
        parser.add_argument(
            f"--{name.replace('_', '-')}", dest=f"s_{name}", default=None, help=field.description
        )
    args = parser.parse_args(argv)
    overrides = list(args.set)
    for name in ServeSettings.model_fields:
        value = getattr(args, f"s_{name}")
        if value is not None:
            overrides.append(f"serve.{name}={_toml_value(value)}")
    return serve_command(args.config, overrides, args.cases)


def _toml_value(raw: str) -> str:
    """Numbers, booleans and TOML literals pass through; anything else is a string."""
    import tomllib

    try:
        tomllib.loads(f"v = {raw}")
        return raw
    except tomllib.TOMLDecodeError:
        return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'


if __name__ == "__main__":
    raise SystemExit(main())
