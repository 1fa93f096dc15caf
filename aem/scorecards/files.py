"""Reading a configuration document: TOML or YAML, chosen by the file's suffix.

Why both: pipeline definitions are usually YAML (they live next to prompts), AEM's own
configuration is TOML; one reader keeps the error wording the same for both.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

YAML_SUFFIXES = (".yaml", ".yml")


class DocumentError(ValueError):
    """A configuration file that cannot be read or parsed; the message names the file."""


def read_document(path: Path) -> dict[str, Any]:
    """The top-level mapping of a ``.toml`` / ``.yaml`` / ``.yml`` file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        if Path(path).suffix.lower() in YAML_SUFFIXES:
            data = yaml.safe_load(text)
        else:
            data = tomllib.loads(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise DocumentError(f"{path}: not valid {_format(path)}: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DocumentError(f"{path}: expected a mapping at the top level")
    return data


def _format(path: Path) -> str:
    return "YAML" if Path(path).suffix.lower() in YAML_SUFFIXES else "TOML"
