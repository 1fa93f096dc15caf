"""Building what one evaluation's metrics share: the comparator and the configured judges.

Why above the metrics: the metrics receive these services (:class:`EvaluationServices`)
and never build them, so the metric and evidence code imports neither the judge clients
(HTTP) nor the configuration schema; the evaluator, the test helpers and the benches
build the services here, once per evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from aem.compare.core import lazy_comparator
from aem.judges.base import Judge
from aem.judges.registry import build_judge
from aem.metrics.groundedness import GroundednessSettings
from aem.metrics.services import ClaimSupport, EvaluationServices
from aem.settings import AemConfig

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


def services_from(
    config: AemConfig, comparator: Callable[[], SemanticComparator] | None = None
) -> EvaluationServices:
    """The services ``config`` sets up; ``comparator`` gives the shared comparator (else
    one is made on first use, for these services alone)."""
    factory = comparator or lazy_comparator(config.compare)

    def judge(name: str) -> Judge:
        return build_judge(name, config, factory)

    grounded = GroundednessSettings.model_validate(config.metrics.tables.get("groundedness", {}))
    claims = ClaimSupport(grounded.similarity_threshold, grounded.overlap_threshold)
    return EvaluationServices(
        config.compare, config.matching, judge, factory, config.verdicts, claims
    )
