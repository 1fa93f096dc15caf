"""Reading a configuration document: TOML or YAML, chosen by the file's suffix.

Why both: pipeline definitions are usually YAML (they live next to prompts), AEM's own
configuration is TOML; one reader keeps the error wording the same for both.

Why the reader refuses what a YAML parser would accept: a key written twice (two
``max:`` in one criterion, two prompts of one name) is silently "the last one wins" in
YAML, so a total would be computed from a value nobody can see is the one used; TOML
already refuses it. A document nested too deeply to parse is an error naming the file,
not a crash of the parser's recursion.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from aem.settings import TomlError, parse_toml

YAML_SUFFIXES = (".yaml", ".yml")
_MERGE_TAG = "tag:yaml.org,2002:merge"
# libyaml's parser when PyYAML was built with it: 2.5x faster on a long pipeline, and it
# refuses nesting past 1,000 levels itself; the pure-Python one recurses (caught below).
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DocumentError(ValueError):
    """A configuration file that cannot be read or parsed; the message names the file."""


class _UniqueKeyLoader(_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """``yaml.safe_load`` that refuses a mapping key written twice (merge keys aside)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                continue  # not hashable; pydantic names it as a key of the wrong type
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"key {key!r} is written twice (which one counts would be a guess)",
                    key_node.start_mark,
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def read_document(path: Path) -> dict[str, Any]:
    """The top-level mapping of a ``.toml`` / ``.yaml`` / ``.yml`` file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 ({exc.reason})"
        raise DocumentError(f"{path}: cannot read: {reason or exc}") from exc
    try:
        data = _parse(path, text)
    except (yaml.YAMLError, TomlError) as exc:
        raise DocumentError(f"{path}: not valid {_format(path)}: {exc}") from exc
    except RecursionError:
        # Raised inside the parser and unwound here, so the stack is whole again.
        raise DocumentError(
            f"{path}: not valid {_format(path)}: nested too deeply to read "
            "(a configuration needs a handful of levels)"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DocumentError(f"{path}: expected a mapping at the top level")
    return data


def _parse(path: Path, text: str) -> Any:
    if Path(path).suffix.lower() in YAML_SUFFIXES:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no arbitrary objects
    return parse_toml(text)


def _format(path: Path) -> str:
    return "YAML" if Path(path).suffix.lower() in YAML_SUFFIXES else "TOML"
