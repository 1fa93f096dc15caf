"""Strict settings models and the errors that name their keys, below everything that has
settings.

Why at the bottom: comparison, matching, judges, metrics, sinks and scorecards each own a
settings model, and each must fail a misspelt key the same way, with the key spelt as it
is written in TOML (``metrics."correctness.truthfulness".require_suport: unknown
setting``). Keeping the bases and the error wording in one module that imports nothing of
AEM lets every layer use them without reaching up to the configuration loader.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationError


class ConfigError(ValueError):
    """The configuration cannot be used; each line names the offending key."""


class StrictSettings(BaseModel):
    """A settings table whose unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class FrozenSettings(BaseModel):
    """A strict settings table that cannot change once checked (shared across threads)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
# Keys that moved when metrics came to own their settings: say where to, not just "unknown".
MOVED_KEYS = {
    ("metrics", "tool_set"): "matching.count_failed_calls",
    ("metrics", "truthfulness"): 'metrics."correctness.truthfulness"',
    ("metrics", "completeness"): 'metrics."correctness.completeness"',
}


def dotted_key(path: Iterable[Any]) -> str:
    """A key path as written in TOML: ``metrics."correctness.truthfulness".enabled``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = str(part)
        text = text if _BARE_KEY.match(text) else '"' + text.replace('"', '\\"') + '"'
        out += f".{text}" if out else text
    return out


def closest(word: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` when a known word is close, else ``""``."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def _error_line(error: Any, prefix: Sequence[Any], model: type[BaseModel] | None) -> str:
    loc = [*prefix, *(p for p in error["loc"] if p not in ("function-after",))]
    if error["type"] == "extra_forbidden":
        moved = MOVED_KEYS.get(tuple(loc[:2]))
        if moved:
            return f"{dotted_key(loc)}: moved to {moved}"
        known = _fields_at(model, error["loc"][:-1]) if model is not None else ()
        return f"{dotted_key(loc)}: unknown setting{closest(str(loc[-1]), known)}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith(dotted_key(loc[:1])) or not loc:
        return message
    return f"{dotted_key(loc)}: {message} (got {error.get('input')!r})"


def _fields_at(model: type[BaseModel], path: Sequence[Any]) -> Iterable[str]:
    """The setting names of the table at ``path`` (for "did you mean")."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return ()
        current = field.annotation
        while not (isinstance(current, type) and issubclass(current, BaseModel)):
            args = get_args(current)
            if not args:
                return ()
            current = args[0]
    names: Iterable[str] = getattr(current, "model_fields", ())
    return names


def config_error(
    exc: ValidationError, prefix: Sequence[Any] = (), model: type[BaseModel] | None = None
) -> ConfigError:
    """A pydantic error as one line per key, keys spelt as in TOML."""
    return ConfigError("\n".join(_error_line(e, prefix, model) for e in exc.errors()))
