"""Project thresholds: each check's threshold as set with ``aem threshold set``.

Why in the store and not only in the TOML: the threshold is a project decision made from
the command line after looking at runs, and it must be copied into each test at
creation. Precedence: the store's override, else ``[metrics."<check>"].threshold``, else
the check's default (LLM checks 7 of 10, tool calls 100 %).
"""

from __future__ import annotations

import time
from typing import Any

from annotated_types import Ge, Le

from aem.checks.registry import check_names, find_check
from aem.datatests.tables import rows as _rows
from aem.metrics.registry import registered_metrics
from aem.settings import AemConfig
from aem.store import Store

# What a threshold of each unit is, for the out-of-range message.
_MEANING = {"%": "a share in percent", "/10": "a judge score"}


class ThresholdError(ValueError):
    """A threshold for a check that has none, or outside its range."""


def threshold_range(check: str) -> tuple[float, float] | None:
    """The ``threshold`` bounds of the check's settings, or None: pass or fail only."""
    model = getattr(find_check(check), "Settings", None)
    field = getattr(model, "model_fields", {}).get("threshold")
    if field is None:
        return None
    low: Any = next((m.ge for m in field.metadata if isinstance(m, Ge)), float("-inf"))
    high: Any = next((m.le for m in field.metadata if isinstance(m, Le)), float("inf"))
    return float(low), float(high)


def threshold_unit(check: str) -> str | None:
    """How the check's threshold reads (``"/10"``, ``"%"``), as the check declares it."""
    return getattr(find_check(check), "threshold_unit", None)


def default_threshold(check: str, config: AemConfig) -> float | None:
    """The threshold from the configuration (or the check's default); None: no threshold."""
    if threshold_range(check) is None:
        return None
    spec = next(s for s in registered_metrics(config.metrics.plugins) if s.name == check)
    settings = spec.settings_model.model_validate(config.metrics.tables.get(check, {}))
    return float(settings.threshold)  # type: ignore[attr-defined]


def validate_threshold(check: str, value: float) -> float:
    """``value`` if it is in the range of the check's ``threshold`` setting (LLM 1–10, tool
    calls 1–100 %)."""
    known = check_names()
    if check not in known:
        raise ThresholdError(f"unknown check {check!r}; checks: {', '.join(known)}")
    bounds = threshold_range(check)
    if bounds is None:
        raise ThresholdError(
            f"{check} has no threshold: an answer passes or fails (gate the run with --gate)"
        )
    low, high = bounds
    if not low <= value <= high:
        unit = _MEANING.get(threshold_unit(check) or "", "the check's threshold")
        raise ThresholdError(f"{check}: threshold {value:g} is outside {low:g}–{high:g} ({unit})")
    return value


def overrides(store: Store) -> dict[str, float]:
    rows = _rows(store, "SELECT check_name, value FROM check_thresholds")
    return {str(name): float(value) for name, value in rows}


def project_threshold(check: str, store: Store, config: AemConfig) -> float | None:
    """The threshold a new test copies for ``check``."""
    if threshold_range(check) is None:
        return None
    found = overrides(store).get(check)
    return found if found is not None else default_threshold(check, config)


def set_threshold(store: Store, check: str, value: float) -> None:
    value = validate_threshold(check, value)
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO check_thresholds VALUES (?, ?, ?)", (check, value, time.time())
        )


def reset_threshold(store: Store, check: str) -> None:
    validate_threshold(check, 1.0)
    with store.transaction() as conn:
        conn.execute("DELETE FROM check_thresholds WHERE check_name = ?", (check,))
