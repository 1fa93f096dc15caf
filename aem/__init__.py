"""AEM — Agent Evaluation Metric: per-turn named metrics and root causes from OTel traces.

The public API (everything else is internal and may change):

- :func:`audit_paths` — trace files or directories (one ``str``/``Path`` or a list) →
  an ``AuditReport``, exactly as ``aem audit`` builds it;
- :func:`load_cases` — a JSONL or YAML cases file → ``{session_id: Case}``;
- :func:`sessions_from_spans` — OTel SDK ``ReadableSpan`` objects or OTLP protobuf
  messages → ``Session`` objects, built as the audit builds them;
- :func:`evaluate_session` / :class:`Evaluator` — one session → its ``SessionReport``;
- :func:`load_config` — ``aem.toml`` and ``key=value`` overrides → ``AemConfig``;
- :class:`Metric` — the interface of a metric plug-in (docs/metrics.md);
- :mod:`aem.testing` — builders to unit-test a metric; the pytest plug-in
  (``pytest --aem-traces DIR``, :mod:`aem.pytest_plugin`) gates an agent in pytest.

Names are imported lazily, so that ``collectors`` (which needs only ``aem.model``) does
not pay for the metrics and the comparison stack:

>>> from aem import evaluate_session, audit_paths
>>> callable(evaluate_session) and callable(audit_paths)
True
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Evaluator",
    "Metric",
    "audit_paths",
    "evaluate_session",
    "load_cases",
    "load_config",
    "sessions_from_spans",
]

_EXPORTS = {
    "Evaluator": "aem.evaluate",
    "Metric": "aem.metrics.base",
    "evaluate_session": "aem.evaluate",
    "audit_paths": "aem.api",
    "load_cases": "aem.api",
    "load_config": "aem.config",
    "sessions_from_spans": "aem.api",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aem' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
