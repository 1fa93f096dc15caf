"""The metric plug-in interface.

A metric is any object with a ``name`` and an ``evaluate(context)`` method returning
:class:`~aem.model.MetricResult` items for the turns it judges. Metrics never do I/O:
everything they may look at is in the :class:`MetricContext`. A team adds its own
metric without editing AEM, through the ``aem.metrics`` entry-point group or the
``metrics.plugins`` configuration list (``"package.module:attribute"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from aem.cases import Case
from aem.config import AemConfig
from aem.model import MetricResult, Outcome, Session, Turn

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


@dataclass
class MetricContext:
    """What a metric may read: the session, its case, the configuration, shared tools."""

    session: Session
    case: Case | None
    config: AemConfig
    comparator_factory: Any = None
    shared: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def comparator(self) -> SemanticComparator:
        if self.comparator_factory is not None:
            comparator: SemanticComparator = self.comparator_factory()
            return comparator
        from aem.compare import SemanticComparator

        return SemanticComparator(self.config.compare)


@runtime_checkable
class Metric(Protocol):
    name: str

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]: ...


def result(
    name: str,
    turn: Turn,
    outcome: Outcome,
    explanation: str,
    *,
    score: float | None = None,
    threshold: float | None = None,
    evidence: list[Any] | None = None,
) -> MetricResult:
    return MetricResult(
        name=name,
        turn_id=turn.turn_id,
        outcome=outcome,
        score=score,
        threshold=threshold,
        explanation=explanation,
        evidence=evidence or [],
    )
