"""Which metrics run: the built-ins, entry-point plug-ins, and configured plug-ins."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from aem.config import AemConfig
from aem.metrics.base import Metric

ENTRY_POINT_GROUP = "aem.metrics"


def builtin_metrics() -> list[Metric]:
    from aem.metrics.completeness import Completeness
    from aem.metrics.tool_execution import ToolExecution
    from aem.metrics.tool_set import ArgumentValidity, ToolChoice
    from aem.metrics.truthfulness import Truthfulness

    return [ToolExecution(), ToolChoice(), ArgumentValidity(), Truthfulness(), Completeness()]


def _instantiate(obj: Any, origin: str) -> Metric:
    candidate = obj() if isinstance(obj, type) else obj
    if not isinstance(candidate, Metric):
        raise TypeError(f"{origin} is not a metric (needs `name` and `evaluate(context)`)")
    return candidate


def load_plugin(spec: str) -> Metric:
    """``"package.module:attribute"`` → a metric instance (class, factory or instance)."""
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise ValueError(f"metric plug-in {spec!r} must be 'module:attribute'")
    module = importlib.import_module(module_name)
    return _instantiate(getattr(module, attribute), spec)


def resolve_metrics(config: AemConfig) -> list[Metric]:
    metrics = builtin_metrics()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        metrics.append(_instantiate(ep.load(), f"entry point {ep.name}"))
    metrics.extend(load_plugin(spec) for spec in config.metrics.plugins)
    disabled = set(config.metrics.disabled)
    return [m for m in metrics if m.name not in disabled]
