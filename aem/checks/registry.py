"""Which checks a dataset test may choose: the ``aem.checks`` entry-point group (AEM's own
are registered there too, the ``groundedness`` criterion among them).

Why everything here reads the checks' own declarations: which case fields a check needs
is said once, in the check, so the check's skip, the test runner's 2,000-evaluation count
and the ``aem checks`` card always agree, and a plug-in check is counted exactly like a
built-in one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aem.cases import Case, missing_reason
from aem.foundation import plugins


def registered_checks() -> list[Any]:
    """Every check class, in registration order (loaded once per ``sys.path`` by the
    extension kernel: the test runner asks per case, and a plug-in put on the path later
    is found then). A broken check plug-in is an error (:class:`aem.foundation.plugins.PluginError`)
    — one that neither evaluates nor names the metrics that decide it included."""
    loaded = plugins.load(plugins.CHECK)
    loaded.raise_first_error()
    for p in loaded.plugins:
        if not callable(getattr(p.target, "evaluate", None)) and not p.target.decided_by:
            problem = "it needs `evaluate` (a method) or `decided_by` (the metrics deciding it)"
            raise plugins.PluginError(p.kind.kind, p.entry_point, p.origin, problem)
    return [p.target for p in loaded.plugins]


def check_names() -> list[str]:
    return [c.name for c in registered_checks()]


def find_check(name: str) -> Any:
    """The check class called ``name``; an unknown name is a
    :class:`aem.foundation.plugins.UnknownPlugin`."""
    for check in registered_checks():
        if check.name == name:
            return check
    raise plugins.UnknownPlugin(f"unknown check {name!r}")


def judged_checks() -> list[str]:
    """The checks scored by a judge (each takes a judge per test)."""
    return [c.name for c in registered_checks() if getattr(c, "judged", False)]


def metric_checks() -> list[str]:
    """The checks that are metrics, not criteria over other metrics (``decided_by``)."""
    return [c.name for c in registered_checks() if not hasattr(c, "decided_by")]


def missing_fields(check: str, case: Case | None) -> str | None:
    """Why ``check`` does not evaluate ``case``, or None when it does."""
    return missing_reason(find_check(check).case_fields, case)


def applicable(checks: Sequence[str], case: Case) -> list[str]:
    """The checks of ``checks`` that evaluate ``case``."""
    return [c for c in checks if missing_fields(c, case) is None]
