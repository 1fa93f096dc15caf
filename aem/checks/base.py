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
the metric registry builds it for ``aem audit`` too, through :meth:`BaseCheck.for_audit`.

Why a check runs in an audit only where asked: a dataset test chooses its checks, an
audit does not. Run on every session, a check reports what the session never claimed to
do ("no final answer" on a session that ends on a tool call) or what an audit metric
already reports (a missing call is ``tool_choice``'s). So in ``aem audit`` a check runs
when its ``[metrics."<check>"]`` table is in the configuration, or when the case carries
a field only that check reads (:meth:`BaseCheck.asked_by_case`), and a precondition the
session lacks there (no judge, no final answer, no field) is a ``skip`` with the reason,
never a ``fail``. In a test the rubric stands: an unanswered case scores 0.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import ClassVar, Self, TypeVar

from pydantic import BaseModel

from aem.cases import Case, missing_reason
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.metrics.base import BaseMetric, MetricContext, result

ENTRY_POINT_GROUP = "aem.checks"

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class AuditRun:
    """How ``aem audit`` runs a check: whether its configuration table asks for it, and
    which other metrics run beside it (the owner of a question the check shares)."""

    configured: bool
    running: frozenset[str]


class BaseCheck(BaseMetric[S]):
    """Optional base of a check: the declarations with their defaults."""

    # Checks run after every other metric, so a root cause keeps the name it had.
    band = "check"
    summary: ClassVar[str] = ""
    threshold_unit: ClassVar[str | None] = None
    # A judged check takes a judge (``settings.judge``, or one a test run injects).
    judged: ClassVar[bool] = False
    # None: chosen as a dataset test chooses it; set by :meth:`for_audit`.
    audit: AuditRun | None = None

    @classmethod
    def skip_reason(cls, case: Case | None) -> str | None:
        """Why this check does not evaluate ``case`` (its required fields), or None."""
        return missing_reason(cls.case_fields, case)

    def for_audit(self, configured: bool, running: Collection[str]) -> Self:
        """This check as ``aem audit`` runs it (the metric registry calls this)."""
        self.audit = AuditRun(configured, frozenset(running))
        return self

    def asked_by_case(self, case: Case) -> bool:
        """Whether ``case`` asks for this check in an audit without its table: by default
        never — a field several metrics read asks for none of them in particular."""
        del case
        return False

    def asked(self, context: MetricContext) -> bool:
        """Whether this check evaluates the session: always when a test chose it; in an
        audit when the configuration or the case asks (and there is a case)."""
        if self.audit is None:
            return True
        case = context.case
        return case is not None and (self.audit.configured or self.asked_by_case(case))

    def unmet(self, turn: Turn, why: str, threshold: float | None = None) -> MetricResult:
        """A precondition the session does not meet (no final answer): ``skip`` with the
        reason in an audit; in a test the rubric's ``fail``, score 0."""
        if self.audit is not None:
            return result(self.name, turn, Outcome.SKIP, why)
        return result(
            self.name,
            turn,
            Outcome.FAIL,
            why,
            score=0.0,
            threshold=threshold,
            evidence=[Evidence(span_id=turn.span_ids[0] if turn.span_ids else None, detail=why)],
        )
