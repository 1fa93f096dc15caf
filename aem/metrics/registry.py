"""Which metrics run: everything in the ``aem.metrics`` entry-point group (the built-ins
are registered there too) plus ``metrics.plugins``, each built from its checked settings.
Loading and the shape check are the extension kernel's (:mod:`aem.plugins`).

Why one path for built-ins and plug-ins: a plug-in then gets exactly what a built-in
gets — its own ``[metrics."<name>"]`` table, validated against its own settings model
at load, with errors that name the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from aem import plugins
from aem.metrics.base import (
    CAUSE,
    DEFAULT_PRECEDENCE,
    OBSERVATION,
    Metric,
    NoSettings,
    Role,
)
from aem.settings import AemConfig
from aem.strict import MOVED_KEYS, ConfigError, closest, config_error, dotted_key

ENTRY_POINT_GROUP = plugins.METRIC.group
# Checks are metrics too (aem.checks.base): registered once, in their own group, read after
# the metrics' so their results keep their place among a turn's results; an audit runs
# one only where asked (:func:`for_audit`).
CHECKS_GROUP = plugins.CHECK.group


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric before it is built: its name, role, settings model, origin.

    ``precedence`` orders a turn's results (and so which failed metric names a root
    cause first); ties keep registration order.
    """

    name: str
    role: Role
    settings_model: type[BaseModel]
    precedence: int
    origin: str
    target: Any

    def create(self, table: dict[str, Any]) -> Metric:
        """Validate ``table`` against the settings model and build the metric."""
        try:
            settings = self.settings_model.model_validate(table)
        except ValidationError as exc:
            raise config_error(exc, ("metrics", self.name), self.settings_model) from exc
        if not isinstance(self.target, type):
            instance: Metric = self.target  # already built, takes no settings
            return instance
        built: Metric
        if self.settings_model is NoSettings and not hasattr(self.target, "Settings"):
            built = self.target()
        else:
            built = self.target(settings)
        return built


def _spec(plugin: plugins.Plugin) -> MetricSpec:
    """What a loaded metric (or check) declares beyond the kernel's shape: its role and
    precedence."""
    obj = plugin.target
    role = getattr(obj, "role", CAUSE)
    if role not in (CAUSE, OBSERVATION):
        raise plugins.PluginError(
            plugin.kind.kind,
            plugin.entry_point,
            plugin.origin,
            f"role must be 'cause' or 'observation', not {role!r}",
        )
    model = plugin.settings_model if isinstance(obj, type) else NoSettings
    if model is plugins.NoPluginSettings:
        model = NoSettings
    precedence = int(getattr(obj, "precedence", DEFAULT_PRECEDENCE))
    return MetricSpec(plugin.name, role, model, precedence, plugin.origin, obj)


def describe(obj: Any, origin: str) -> MetricSpec:
    """Read what a metric class (or instance) declares; reject what is not a metric."""
    module = getattr(obj, "__module__", "?")
    try:
        return _spec(plugins.checked(plugins.METRIC, obj, origin, module, origin))
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from exc


def load_plugin(spec: str) -> Any:
    """``"package.module:attribute"`` → the object it names (a metric class or instance)."""
    try:
        return plugins.from_reference(plugins.METRIC, spec, "metrics.plugins").target
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from exc


def registered_metrics(plugins_: Sequence[str] = ()) -> list[MetricSpec]:
    """Every known metric: entry points (built-ins included), then configured plug-ins.

    A metric or check plug-in that does not load is an error here: every metric takes
    part in a verdict, so running without it would change verdicts silently.
    """
    try:
        loaded = [plugins.load(plugins.METRIC), plugins.load(plugins.CHECK)]
        for group in loaded:
            group.raise_first_error()
        found = [p for group in loaded for p in group.plugins]
        found += [plugins.from_reference(plugins.METRIC, s, "metrics.plugins") for s in plugins_]
        specs = [_spec(p) for p in found]
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from exc
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.name in seen:
            raise ConfigError(
                f"two metrics report as {spec.name!r}: {seen[spec.name]} and {spec.origin}"
            )
        seen[spec.name] = spec.origin
    return sorted(specs, key=lambda s: s.precedence)


def _unknown_metric(name: str, known: set[str], key: str) -> ConfigError:
    moved = MOVED_KEYS.get(("metrics", name))
    hint = f"; moved to {moved}" if moved else closest(name, known)
    return ConfigError(f"{key}: unknown metric {name!r}{hint}")


@dataclass(frozen=True)
class ResolvedMetrics:
    """One configuration's metrics, resolved once per run and handed to whoever needs them.

    ``specs`` is every registered metric and check (disabled ones included: dataset tests
    list checks a configuration switched off), ``metrics`` the built ones that run, in
    precedence order. Why one object: building a metric validates its settings table and
    may import a plug-in; the loader, the evaluator and the dataset tests each did that
    again, and could disagree if a plug-in's entry points changed in between.
    """

    config: AemConfig
    specs: tuple[MetricSpec, ...]
    metrics: tuple[Metric, ...]

    def spec(self, name: str) -> MetricSpec | None:
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
    disabled = set(config.metrics.disabled)
    running = [s for s in specs if s.name not in disabled]
    names = frozenset(s.name for s in running)
    built = tuple(
        for_audit(s.create(tables.get(s.name, {})), s.name in tables, names) for s in running
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
