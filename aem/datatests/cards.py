"""The check cards ``aem checks`` prints: what each check evaluates, the case fields it
needs, its project threshold (marked when overridden), and its recommended judges."""

from __future__ import annotations

from typing import Any

from aem.cases import CaseField, needs
from aem.checks.registry import check_names, find_check, judged_checks
from aem.datatests.thresholds import default_threshold, overrides, threshold_unit
from aem.judges.registry import known_judges
from aem.metrics.registry import registered_metrics
from aem.settings import AemConfig
from aem.store import Store


def needs_of(check: str) -> str:
    """The case fields ``check`` needs, as its card says it; with none required, the
    fields it reads."""
    declared = find_check(check).case_fields
    return needs(declared) or ", ".join(f.describe() for f in declared if isinstance(f, CaseField))


def check_cards(config: AemConfig, store: Store) -> list[dict[str, Any]]:
    specs = {s.name: s for s in registered_metrics(config.metrics.plugins)}
    overridden = overrides(store)
    known = set(known_judges(config))
    cards = []
    judged = judged_checks()
    for check in check_names():
        threshold = overridden.get(check, default_threshold(check, config))
        card: dict[str, Any] = {
            "check": check,
            "evaluates": find_check(check).summary,
            "needs": needs_of(check),
            "threshold": threshold,
            "unit": threshold_unit(check),
            "overridden": check in overridden,
        }
        if check in judged:
            table = specs[check].settings_model.model_validate(config.metrics.tables.get(check, {}))
            card["recommended_judges"] = [
                {"judge": j, "configured": j in known}
                for j in table.recommended_judges  # type: ignore[attr-defined]
            ]
        cards.append(card)
    return cards
