"""The check plug-in interface: a metric of the answer turn that declares its case fields.

A check is a metric (``name``, ``Settings``, ``evaluate``; :mod:`aem.metrics.base`) with:

* ``case_fields`` — the case fields it reads, typed; the required ones decide which cases
  it evaluates. A case without them is ``skip`` with the reason derived from the
  declaration ("the case has no question"), and counts in no pass rate, mean or the
  2,000-evaluation cap of a test run (:func:`aem.checks.registry.applicable`);
* ``summary`` — what it evaluates, one sentence for ``aem checks``;
* ``threshold_unit`` — ``"/10"`` (a judge score), ``"%"`` (a share), or None when the
  verdict is a plain pass or fail. The range is its ``Settings``' ``threshold`` field's.

Judged checks derive from :class:`aem.checks.llm.LlmCheck` and add their prompt.
Register a check in the ``aem.checks`` entry-point group: dataset tests offer it, and
``aem audit`` runs it like any metric (the metric registry reads that group too).
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from pydantic import BaseModel

from aem.cases import Case, missing_reason
from aem.metrics.base import BaseMetric

# Checks run after every other metric, so a root cause keeps the name it had.
CHECK_PRECEDENCE = 200
ENTRY_POINT_GROUP = "aem.checks"

S = TypeVar("S", bound=BaseModel)


class BaseCheck(BaseMetric[S]):
    """Optional base of a check: the declarations with their defaults."""

    precedence = CHECK_PRECEDENCE
    summary: ClassVar[str] = ""
    threshold_unit: ClassVar[str | None] = None
    # A judged check takes a judge (``settings.judge``, or one a test run injects).
    judged: ClassVar[bool] = False

    @classmethod
    def skip_reason(cls, case: Case | None) -> str | None:
        """Why this check does not evaluate ``case`` (its required fields), or None."""
        return missing_reason(cls.case_fields, case)
