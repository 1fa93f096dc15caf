"""Totals for ``aem audit --scorecard``: every closed session that ran the pipeline.

Why sessions and not traces: a pipeline run over one conversation may span several traces
(a step re-run later, a rescore); AEM's session key joins them, so the latest result of
each step is found wherever it came from.
"""

from __future__ import annotations

from pydantic import BaseModel

from aem.model import ClosedSession
from aem.scorecards.extract import latest_results, root_span
from aem.scorecards.scorecard import Scorecard
from aem.scorecards.totals import Total, compute_total
from aem.scorecards.versions import ScorecardStore


class ScoredConversation(BaseModel):
    """A total as ``aem audit`` computed it, and the stored version it now corresponds to."""

    total: Total
    version: int | None = None
    new_version: bool = False


class SessionScorer:
    """Called with each closed session; totals what belongs to the scorecard's pipeline."""

    def __init__(self, scorecard: Scorecard, store: ScorecardStore) -> None:
        self.scorecard = scorecard
        self.store = store
        self.scored: list[ScoredConversation] = []

    def __call__(self, session: ClosedSession) -> None:
        results = latest_results(session.spans, self.scorecard.pipeline)
        if not results:
            return  # not a run of this pipeline
        total = compute_total(self.scorecard, session.session_id, results)
        created = self.store.record(total, results, root_span(session.spans))
        version = created.version if created else self._latest(total)
        self.scored.append(
            ScoredConversation(total=total, version=version, new_version=created is not None)
        )

    def _latest(self, total: Total) -> int | None:
        if total.state == "pending":
            return None
        versions = self.store.versions(total.pipeline, total.conversation)
        return versions[-1].version if versions else None
