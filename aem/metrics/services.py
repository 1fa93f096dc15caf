"""What a metric may use besides the session: the shared comparator, the compare and
matching settings, and the configured judges — never the whole configuration.

Why not the configuration: a metric that reads ``AemConfig`` depends on every section
of it, and a test must build one to run it. A metric's own settings come through its
constructor; what several metrics share comes through :class:`EvaluationServices`,
built once by whoever evaluates (:func:`aem.services.services_from`, above the metrics:
it is what knows how to build a judge or a comparator).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aem.compare.settings import CompareSettings
from aem.judges.base import Judge
from aem.matching.settings import MatchSettings
from aem.settings import VerdictSettings

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


@dataclass(frozen=True)
class ClaimSupport:
    """When a context sentence supports a claim: ``[metrics.groundedness]``'s
    ``similarity_threshold`` and ``overlap_threshold``, shared with every metric that
    checks claims as groundedness does (refusal, on the sentences beside a refusal)."""

    similarity: float
    overlap: float


@dataclass(frozen=True)
class EvaluationServices:
    """The shared comparator (made on first use), the compare and matching settings, and
    ``judge(name)``: the judge ``[judges.<name>]`` configures (JudgeConfigError if none)."""

    compare: CompareSettings
    matching: MatchSettings
    judge: Callable[[str], Judge]
    comparator_factory: Callable[[], SemanticComparator]
    verdicts: VerdictSettings = field(default_factory=VerdictSettings)
    # None: groundedness's default thresholds (services built without a configuration).
    claim_support: ClaimSupport | None = None

    def comparator(self) -> SemanticComparator:
        """The semantic comparator (shared across sessions when the evaluator gives one)."""
        return self.comparator_factory()
