"""Which sinks exist: the ``aem.sinks`` entry-point group, loaded by the extension kernel
(:mod:`aem.foundation.plugins`), built-ins registered the same way.

Why entry points for the built-ins too (the OTel SDK registers its exporters the same
way): one mechanism, so a third-party sink is as much a first-class citizen as ours, and
the registry — not an if-chain — decides what ``[sinks.<name>]`` may name. A broken sink
plug-in is an error (:class:`aem.foundation.plugins.PluginError`) only when a configuration names
it; the other sinks still work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aem.foundation import plugins
from aem.sinks.base import Sink, SinkSettings, SinkType


def sink_types() -> dict[str, SinkType]:
    """Every registered sink type that loads, by name (loaded once per ``sys.path``)."""
    return {p.name: p.target for p in plugins.load(plugins.SINK).plugins}


def validate_sink_settings(raw: Mapping[str, Any]) -> dict[str, SinkSettings]:
    """``[sinks]`` tables → each sink's own settings model (unknown names refused)."""
    validated = plugins.validate_tables(plugins.SINK, raw)
    return {name: settings for name, settings in validated.items()}  # type: ignore[misc]


def build_sinks(configured: Mapping[str, SinkSettings]) -> list[Sink]:
    """One live sink per configured ``[sinks.<name>]`` table, in name order."""
    loaded = plugins.load(plugins.SINK)
    return [
        loaded.require(name, f"sinks.{name}").build(configured[name]) for name in sorted(configured)
    ]


__all__ = ["build_sinks", "sink_types", "validate_sink_settings"]
