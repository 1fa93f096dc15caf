"""Which metrics run: the ``aem.metrics`` and ``aem.checks`` entry-point groups (the
built-ins are registered there too) plus ``metrics.plugins``, each built from its checked
settings. Loading, the shape check, the order (named bands) and the one way to build
(``from_settings(settings, services)``) are the extension kernel's (:mod:`aem.foundation.plugins`).

Why one path for built-ins and plug-ins: a plug-in then gets exactly what a built-in
gets — its own ``[metrics."<name>"]`` table, validated against its own settings model
at load, with errors that name the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from aem.foundation import plugins
from aem.foundation.strict import MOVED_KEYS, ConfigError, closest, config_error, dotted_key
from aem.metrics.base import Metric
from aem.settings import AemConfig


def registered_metrics(plugins_: Sequence[str] = ()) -> list[plugins.Plugin]:
    """Every known metric and check, in band order: entry points (built-ins included),
    then configured plug-ins; a criterion over other metrics (``decided_by``) is not one.

    A metric or check plug-in that does not load is an error here: every metric takes
    part in a verdict, so running without it would change verdicts silently.
    """
    try:
        loaded = [plugins.load(plugins.METRIC), plugins.load(plugins.CHECK)]
        for group in loaded:
            group.raise_first_error()
        found = [p for group in loaded for p in group.plugins]
        found += [plugins.from_reference(plugins.METRIC, s, "metrics.plugins") for s in plugins_]
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from exc
    found = [p for p in found if not hasattr(p.target, "decided_by")]
    seen: dict[str, str] = {}
    for plugin in found:
        if plugin.name in seen:
            raise ConfigError(
                f"two metrics report as {plugin.name!r}: {seen[plugin.name]} and {plugin.origin}"
            )
        seen[plugin.name] = plugin.origin
    return sorted(found, key=lambda p: plugins.METRIC.rank(p.target))


def build(plugin: plugins.Plugin, table: Mapping[str, Any]) -> Metric:
    """The metric ``plugin`` built from its ``[metrics."<name>"]`` table (a bad key is a
    :class:`ConfigError` naming it)."""
    try:
        settings = plugin.settings(table)
    except ValidationError as exc:
        raise config_error(exc, ("metrics", plugin.name), plugin.settings_model) from exc
    built: Metric = plugin.build(settings)
    return built


def _unknown_metric(name: str, known: set[str], key: str) -> ConfigError:
    moved = MOVED_KEYS.get(("metrics", name))
    hint = f"; moved to {moved}" if moved else closest(name, known)
    return ConfigError(f"{key}: unknown metric {name!r}{hint}")


@dataclass(frozen=True)
class ResolvedMetrics:
    """One configuration's metrics, resolved once per run and handed to whoever needs them.

    ``specs`` is every registered metric and check (disabled ones included: dataset tests
    list checks a configuration switched off), ``metrics`` the built ones that run, in
    band order. Why one object: building a metric validates its settings table and may
    import a plug-in; the loader, the evaluator and the dataset tests each did that again,
    and could disagree if a plug-in's entry points changed in between.
    """

    config: AemConfig
    specs: tuple[plugins.Plugin, ...]
    metrics: tuple[Metric, ...]

    def spec(self, name: str) -> plugins.Plugin | None:
        """The registered metric or check reporting as ``name``."""
        return next((s for s in self.specs if s.name == name), None)


def resolve(config: AemConfig) -> ResolvedMetrics:
    """The metrics ``config`` runs, built from their checked settings; errors name the key."""
    specs = registered_metrics(config.metrics.plugins)
    known = {s.name for s in specs}
    tables = config.metrics.tables
    for name in tables:
        if name not in known:
            raise _unknown_metric(name, known, dotted_key(("metrics", name)))
    for name in config.metrics.disabled:
        if name not in known:
            raise _unknown_metric(name, known, "metrics.disabled")
    running = [s for s in specs if s.name not in set(config.metrics.disabled)]
    names = frozenset(s.name for s in running)
    built = tuple(
        for_audit(build(s, tables.get(s.name, {})), s.name in tables, names) for s in running
    )
    return ResolvedMetrics(config, tuple(specs), built)


def for_audit(metric: Metric, configured: bool, running: frozenset[str]) -> Metric:
    """A check as an audit runs it (``for_audit``, :mod:`aem.checks.base`): only where its
    table (``configured``) or the case asks, beside the other metrics ``running``. A
    dataset test builds its checks from the specs itself, as the test chose them."""
    hook = getattr(metric, "for_audit", None)
    return hook(configured, running) if callable(hook) else metric


def resolve_metrics(config: AemConfig) -> list[Metric]:
    """The metrics to run (:func:`resolve`'s ``metrics``), for callers that need no more."""
    return list(resolve(config).metrics)
