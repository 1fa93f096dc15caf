"""Project thresholds: each check's threshold as set with ``aem threshold set``.

Why in the store and not only in the TOML: the threshold is a project decision made from
the command line after looking at runs, and it must be copied into each test at
creation. Precedence: the store's override, else ``[metrics."<check>"].threshold``, else
the check's default (LLM checks 7 of 10, tool calls 100 %).
"""

from __future__ import annotations

import time

from aem.checks.fields import ALL_CHECKS, NO_THRESHOLD, TOOL_CALLS
from aem.config import AemConfig
from aem.datatests.tables import rows as _rows
from aem.metrics.registry import registered_metrics
from aem.store import Store


class ThresholdError(ValueError):
    """A threshold for a check that has none, or outside its range."""


def default_threshold(check: str, config: AemConfig) -> float | None:
    """The threshold from the configuration (or the check's default); None: no threshold."""
    if check in NO_THRESHOLD:
        return None
    spec = next(s for s in registered_metrics(config.metrics.plugins) if s.name == check)
    settings = spec.settings_model.model_validate(config.metrics.tables.get(check, {}))
    return float(settings.threshold)  # type: ignore[attr-defined]


def validate_threshold(check: str, value: float) -> float:
    """``value`` if it is in the check's range (LLM 1–10, tool calls 1–100 %)."""
    if check not in ALL_CHECKS:
        raise ThresholdError(f"unknown check {check!r}; checks: {', '.join(ALL_CHECKS)}")
    if check in NO_THRESHOLD:
        raise ThresholdError(
            f"{check} has no threshold: an answer passes or fails (gate the run with --gate)"
        )
    low, high = (1.0, 100.0) if check == TOOL_CALLS else (1.0, 10.0)
    if not low <= value <= high:
        unit = "a share in percent" if check == TOOL_CALLS else "a judge score"
        raise ThresholdError(f"{check}: threshold {value:g} is outside {low:g}–{high:g} ({unit})")
    return value


def overrides(store: Store) -> dict[str, float]:
    rows = _rows(store, "SELECT check_name, value FROM check_thresholds")
    return {str(name): float(value) for name, value in rows}


def project_threshold(check: str, store: Store, config: AemConfig) -> float | None:
    """The threshold a new test copies for ``check``."""
    if check in NO_THRESHOLD:
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
