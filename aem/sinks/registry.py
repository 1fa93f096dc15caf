"""Which sinks exist: the ``aem.sinks`` entry-point group, built-ins registered the same way.

Why entry points for the built-ins too (the OTel SDK registers its exporters the same
way): one mechanism, so a third-party sink is as much a first-class citizen as ours, and
the registry — not an if-chain — decides what ``[serve.sinks.<name>]`` may name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from aem.sinks.base import Sink, SinkSettings, SinkType

ENTRY_POINT_GROUP = "aem.sinks"


class SinkRegistryError(ValueError):
    """A sink entry point that does not load or is not a sink type."""


@cache
def sink_types() -> dict[str, SinkType]:
    """Every registered sink type by name, loaded once."""
    found: dict[str, SinkType] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
        except Exception as exc:
            raise SinkRegistryError(f"sink entry point {ep.name!r} ({ep.value}): {exc}") from exc
        settings = getattr(loaded, "Settings", None)
        if not (
            isinstance(settings, type)
            and issubclass(settings, SinkSettings)
            and callable(getattr(loaded, "from_settings", None))
        ):
            raise SinkRegistryError(
                f"sink entry point {ep.name!r} ({ep.value}) is not a sink type: it needs a "
                "`Settings` model (a SinkSettings subclass) and a `from_settings` classmethod"
            )
        found[ep.name] = loaded
    return found


def validate_sink_settings(raw: Mapping[str, Any]) -> dict[str, SinkSettings]:
    """``[serve.sinks]`` tables → each sink's own settings model (unknown names refused)."""
    known = sink_types()
    validated: dict[str, SinkSettings] = {}
    for name, table in raw.items():
        if name not in known:
            raise ValueError(
                f"serve.sinks.{name}: unknown sink; known sinks: {', '.join(sorted(known))}"
            )
        if isinstance(table, SinkSettings):
            validated[name] = table
        else:
            validated[name] = known[name].Settings.model_validate(table)
    return validated


def build_sinks(configured: Mapping[str, SinkSettings]) -> list[Sink]:
    """One live sink per configured ``[serve.sinks.<name>]`` table, in name order."""
    known = sink_types()
    return [known[name].from_settings(configured[name]) for name in sorted(configured)]
