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

Names are imported lazily, so that ``collectors`` (which needs only ``aem.foundation.model``) does
not pay for the metrics and the comparison stack:

>>> from aem import evaluate_session, audit_paths
>>> callable(evaluate_session) and callable(audit_paths)
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
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


# --- old import paths, for one release --------------------------------------------------
# The foundation modules moved to aem.foundation and the applications over runs to
# aem.runs; ``import aem.model`` (and the rest) still works, with a DeprecationWarning,
# and gives the very same module object.
_MOVED = {
    "aem.model": "aem.foundation.model",
    "aem.strict": "aem.foundation.strict",
    "aem.plugins": "aem.foundation.plugins",
    "aem.http": "aem.foundation.http",
    "aem.vocabulary": "aem.foundation.vocabulary",
    "aem.sessioncache": "aem.foundation.sessioncache",
    "aem.textindex": "aem.foundation.textindex",
    "aem.gcpause": "aem.foundation.gcpause",
    "aem.terminaltext": "aem.foundation.terminaltext",
    "aem.provenance": "aem.foundation.provenance",
    "aem.denominator": "aem.foundation.denominator",
    "aem.diff": "aem.runs.diff",
    "aem.divergence": "aem.runs.divergence",
    "aem.agreement": "aem.runs.agreement",
    "aem.gates": "aem.runs.gates",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a moved module under its old name and hands out the module itself."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        new = _MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: Any) -> None:
        """Nothing to run: the module was imported under its new name."""


sys.meta_path.insert(0, _MovedModules())
