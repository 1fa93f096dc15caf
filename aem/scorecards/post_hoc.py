"""Totals for ``aem audit --scorecard``: every closed session that ran the pipeline.

Why sessions and not traces: a pipeline run over one conversation may span several traces
(a step re-run later, a rescore); AEM's session key joins them, so the latest result of
each step is found wherever it came from.

Why step spans become input issues here: a score that is not a number, a ``fired`` that
is not a boolean or a step the pipeline lacks is a fault of the input, not of the
operator being assessed. The total says what it could not decide (pending, ignored
steps); the issue names the span, so whoever owns the pipeline can find and fix it.
"""

from __future__ import annotations

from pydantic import BaseModel

from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from aem.scorecards.extract import StepResult, latest_results, root_span
from aem.scorecards.scorecard import Scorecard
from aem.scorecards.totals import Total, compute_total
from aem.scorecards.versions import ScorecardStore

# The kinds of the input issues a scorecard reports (``aem audit``'s "input problems").
BAD_STEP_SPAN = "scorecard_bad_step_span"
UNKNOWN_STEP_SPAN = "scorecard_unknown_step"


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
        self.issues: list[InputIssue] = []

    def __call__(self, session: ClosedSession) -> None:
        def report(span: SpanRecord, result: StepResult) -> None:
            self.issues.extend(self._issues(span, result, session.session_id))

        found = latest_results(session.spans, self.scorecard.pipeline, report)
        if not found:
            return  # not a run of this pipeline
        results = {k: r for k, r in found.items() if self.scorecard.definition.step(k)}
        total = compute_total(self.scorecard, session.session_id, found)
        created = self.store.record(total, results, root_span(session.spans))
        version = created.version if created else self._latest(total)
        self.scored.append(
            ScoredConversation(total=total, version=version, new_version=created is not None)
        )

    def _issues(self, span: SpanRecord, result: StepResult, session: str) -> list[InputIssue]:
        """What is wrong with one step span, each naming the span and its step."""
        where = f"step {result.step!r} (span {span.span_id})"
        if self.scorecard.definition.step(result.step) is None:
            message = (
                f"{where}: pipeline {self.scorecard.pipeline!r} has no such step; "
                "the span is ignored by the total"
            )
            return [InputIssue.at_span(UNKNOWN_STEP_SPAN, message, span, session_id=session)]
        return [
            InputIssue.at_span(
                BAD_STEP_SPAN, f"{where}: {problem}; no usable result", span, session_id=session
            )
            for problem in result.problems
        ]

    def _latest(self, total: Total) -> int | None:
        if total.state == "pending":
            return None
        versions = self.store.versions(total.pipeline, total.conversation)
        return versions[-1].version if versions else None
