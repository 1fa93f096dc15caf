"""Loading the configuration: a TOML file plus ``--set`` overrides, checked whole.

Why strict: every threshold must be named, defaulted and validated once, and a misspelt
key that is silently ignored leaves a verdict judged by a threshold nobody chose. So
every table forbids unknown keys, and the error names the key as it is written in TOML
(``metrics."correctness.truthfulness".require_suport: unknown setting``).

Why this module sits above the metrics: each metric owns its settings, and
``[metrics."<report name>"]`` is validated against that metric's own settings model when
the configuration is loaded — built-ins and plug-ins alike. The schema itself
(:mod:`aem.settings`) and the error wording (:mod:`aem.foundation.strict`) live below the metrics;
the names they define are re-exported here because ``aem.config`` is where users have
always imported them from.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aem.foundation import plugins
from aem.foundation.strict import MOVED_KEYS, ConfigError, closest, config_error, dotted_key
from aem.metrics.registry import ResolvedMetrics, resolve
from aem.settings import (
    OTHER_COMMANDS_TABLES,
    AemConfig,
    AssemblySettings,
    MetricsSettings,
    TaxonomyRule,
    apply_override,
    read_toml,
)

__all__ = [
    "MOVED_KEYS",
    "OTHER_COMMANDS_TABLES",
    "AemConfig",
    "AssemblySettings",
    "ConfigError",
    "MetricsSettings",
    "TaxonomyRule",
    "apply_override",
    "closest",
    "config_error",
    "config_sources",
    "dotted_key",
    "load_config",
    "load_resolved",
    "loaded_plugins",
    "read_toml",
    "resolve_config",
    "validate_config",
]


def resolve_config(data: dict[str, Any], schema: type[AemConfig] = AemConfig) -> ResolvedMetrics:
    """Raw TOML data → a checked ``AemConfig`` and the metrics it runs, every plug-in
    table included (``[metrics.*]``, ``[judges.*]``, ``[sinks.*]``, ``[sources.*]``).

    Resolving the metrics here (importing configured plug-ins) is what makes a misspelt
    metric setting fail at load rather than when the first session is evaluated; the
    result is kept and handed to the evaluator, so a run resolves them once. ``schema``
    is the model of the whole file: a command with a section of its own (``aem serve``,
    :class:`aem.serve.settings.ServeConfig`) adds it to :class:`AemConfig`.
    """
    data = _one_sink_table(data)
    data = {
        k: v for k, v in data.items() if k not in OTHER_COMMANDS_TABLES or k in schema.model_fields
    }
    try:
        config = schema.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, (), schema) from exc
    return resolve(config)


def _one_sink_table(data: dict[str, Any]) -> dict[str, Any]:
    """``[serve.sinks.<name>]``, the older spelling, folded into ``[sinks.<name>]``: a sink
    is configured in one table, whichever command delivers through it."""
    serve = data.get("serve")
    if not (isinstance(serve, dict) and isinstance(serve.get("sinks"), dict)):
        return data
    sinks = dict(data.get("sinks") or {})
    for name, table in serve["sinks"].items():
        if name in sinks and sinks[name] != table:
            raise ConfigError(
                f"sinks.{name} and serve.sinks.{name} both configure the {name} sink: "
                f"keep one, [sinks.{name}] (aem serve and aem audit --sink both read it)"
            )
        sinks[name] = table
    return {
        **data,
        "sinks": sinks,
        "serve": {k: v for k, v in serve.items() if k != "sinks"},
    }


def validate_config(data: dict[str, Any]) -> AemConfig:
    """Raw TOML data → a checked ``AemConfig`` (:func:`resolve_config` without the metrics)."""
    return resolve_config(data).config


def load_resolved(
    path: Path | None = None,
    overrides: list[str] | None = None,
    schema: type[AemConfig] = AemConfig,
) -> ResolvedMetrics:
    """A TOML file plus ``key.path=value`` overrides, checked, with the metrics it runs;
    the file is read once, and an error names it.

    >>> run = load_resolved(overrides=['metrics.disabled=["tool_repetition"]'])
    >>> "tool_repetition" in [m.name for m in run.metrics], run.spec("tool_repetition") is None
    (False, False)
    """
    data = read_toml(path) if path is not None else {}
    for item in overrides or []:
        apply_override(data, item)
    return _resolve_read(data, path, schema)


def _resolve_read(
    data: dict[str, Any], path: Path | None, schema: type[AemConfig] = AemConfig
) -> ResolvedMetrics:
    """:func:`resolve_config` of what was read from ``path``, errors naming the file."""
    try:
        return resolve_config(data, schema)
    except ConfigError as exc:
        if path is None or str(exc).startswith(str(path)):
            raise
        raise ConfigError(f"{path}: {exc}") from exc


def load_config(path: Path | None = None, overrides: list[str] | None = None) -> AemConfig:
    """Load configuration from a TOML file, then apply ``key.path=value`` overrides.

    >>> load_config(overrides=["matching.pass_threshold=0.5"]).matching.pass_threshold
    0.5
    """
    return load_resolved(path, overrides).config


# Where an effective setting came from, as ``aem config show`` prints it.
SOURCE_DEFAULT, SOURCE_FILE, SOURCE_SET = "default", "file", "--set"


def config_sources(
    path: Path | None = None, overrides: list[str] | None = None
) -> list[tuple[str, Any, str]]:
    """Every effective setting as ``(TOML key, value, source)``, sources being
    ``default``, ``file`` or ``--set`` — so a user can see which threshold judged a run
    without reading the defaults in the source.

    Each metric's table is shown in full (its settings model's defaults filled in),
    because that is what the metric runs with.

    >>> rows = config_sources(overrides=["matching.pass_threshold=0.5"])
    >>> [r for r in rows if r[0] == "matching.pass_threshold"]
    [('matching.pass_threshold', 0.5, '--set')]
    """
    file_data = read_toml(path) if path is not None else {}
    data, set_data = copy.deepcopy(file_data), dict[str, Any]()
    for item in overrides or []:
        apply_override(set_data, item)
        apply_override(data, item)
    resolved = _resolve_read(data, path)
    effective = resolved.config.model_dump(mode="json")
    effective["metrics"] = _metric_tables(resolved)
    rows = []
    for keys, value in _leaves(effective, ()):
        if _holds(set_data, keys):
            source = SOURCE_SET
        elif _holds(file_data, keys):
            source = SOURCE_FILE
        else:
            source = SOURCE_DEFAULT
        rows.append((dotted_key(keys), value, source))
    return rows


def _metric_tables(resolved: ResolvedMetrics) -> dict[str, Any]:
    """``disabled``, ``plugins`` and every registered metric's full settings table."""
    config = resolved.config
    tables: dict[str, Any] = {
        "disabled": list(config.metrics.disabled),
        "plugins": list(config.metrics.plugins),
    }
    for spec in resolved.specs:
        raw = config.metrics.tables.get(spec.name, {})
        tables[spec.name] = spec.settings_model.model_validate(raw).model_dump(mode="json")
    return tables


def _leaves(node: Any, keys: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], Any]]:
    """Key paths to scalar or list values; an empty table is a leaf of its own."""
    if isinstance(node, dict) and node:
        for key, child in node.items():
            yield from _leaves(child, (*keys, key))
    else:
        yield keys, node


def _holds(data: dict[str, Any], keys: tuple[Any, ...]) -> bool:
    """Whether raw configuration ``data`` sets ``keys`` (or a table containing them)."""
    node: Any = data
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def loaded_plugins() -> list[dict[str, str]]:
    """Every plug-in the installed distributions register, kind by kind: its ``kind``,
    ``name``, ``module`` and ``distribution``, and for one that does not load the
    ``error`` (the other plug-ins of its kind still load)."""
    rows: list[dict[str, str]] = []
    for loaded in plugins.every_loaded():
        kind = loaded.kind.kind
        rows += [
            {"kind": kind, "name": p.name, "module": p.module, "distribution": p.distribution}
            for p in loaded.plugins
        ]
        rows += [
            {
                "kind": kind,
                "name": e.entry_point,
                "module": e.module,
                "distribution": e.distribution,
                "error": e.problem,
            }
            for e in loaded.errors
        ]
    return rows
