"""AEM — Agent Evaluation Metric: per-turn named metrics and root causes from OTel traces.

The library entry points are imported lazily, so that ``collectors`` (which needs only
``aem.model``) does not pay for the metrics and the comparison stack:

>>> from aem import evaluate_session, audit_paths
>>> callable(evaluate_session) and callable(audit_paths)
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["Evaluator", "audit_paths", "evaluate_session", "load_cases", "load_config"]

_EXPORTS = {
    "Evaluator": "aem.evaluate",
    "evaluate_session": "aem.evaluate",
    "audit_paths": "aem.audit",
    "load_cases": "aem.cases",
    "load_config": "aem.config",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aem' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
