"""The check cards ``aem checks`` prints: what each check evaluates, the case fields it
needs, its project threshold (marked when overridden), and its recommended judges."""

from __future__ import annotations

from typing import Any

from aem.checks.fields import ALL_CHECKS, LLM_CHECKS, NEEDS, TOOL_CALLS
from aem.config import AemConfig
from aem.datatests.thresholds import default_threshold, overrides
from aem.judges.registry import known_judges
from aem.metrics.registry import registered_metrics
from aem.store import Store

WHAT = {
    "check.relevance": "whether the agent answers the question asked; style, politeness "
    "and length do not count (judge, 0-10)",
    "check.faithfulness": "no invented facts: claims rest on the question, the reference or "
    'well-known facts; an honest "I don\'t know" is faithful (judge, 0-10)',
    "check.task_completion": "whether the agent did what the reference answer or judge "
    "instruction describes; other words for the same result pass (judge, 0-10)",
    "check.json_schema": "rule: the answer is only JSON (raw or one code block) and valid "
    "against the case's schema; pass or fail",
    "check.tool_calls": "rule: the share of the case's functions called as tools; errored "
    "calls count, order and arguments do not",
    "groundedness": "happy / edge: every claim rests on what the agent found and cites a "
    'source [N]; oos: an honest "I don\'t know" (metrics groundedness and refusal; '
    "embedded, or their configured judge); pass or fail",
}


def check_cards(config: AemConfig, store: Store) -> list[dict[str, Any]]:
    specs = {s.name: s for s in registered_metrics(config.metrics.plugins)}
    overridden = overrides(store)
    known = set(known_judges(config))
    cards = []
    for check in ALL_CHECKS:
        threshold = overridden.get(check, default_threshold(check, config))
        card: dict[str, Any] = {
            "check": check,
            "evaluates": WHAT[check],
            "needs": NEEDS[check],
            "threshold": threshold,
            "unit": "%" if check == TOOL_CALLS else ("/10" if check in LLM_CHECKS else None),
            "overridden": check in overridden,
        }
        if check in LLM_CHECKS:
            table = specs[check].settings_model.model_validate(config.metrics.tables.get(check, {}))
            card["recommended_judges"] = [
                {"judge": j, "configured": j in known}
                for j in table.recommended_judges  # type: ignore[attr-defined]
            ]
        cards.append(card)
    return cards
