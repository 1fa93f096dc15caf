"""``groundedness``: every factual claim of an answer rests on what the agent had found,
and the answer cites at least one source ``[N]``.

Judged on answers to the user (not on reasoning turns: their text is the agent's own
working, which the user never reads). The answer is split into claims (sentences and list
items; greetings and offers of help are not claims). The context is what the answer turn
saw (:mod:`aem.evidence.grounding`): ancestor retrievals' documents, ancestor tool
results, the user's question. Checks, in order:

1. every citation (``[N]``, ``[N, M]``, ``[N][M]``, ``[id]``) points at a source the
   agent had — else ``dangling citation``, a failure of its own;
2. no claim is proven wrong (:mod:`aem.evidence.entailment`, or the configured judge):
   a value or name the context does not hold, or a negation or qualifier that differs
   from the passage the claim paraphrases — else the first such claim is quoted with the
   value and its closest candidate (evidence for each);
3. at least one citation, when the context holds documents (``require_citation``) —
   else ``no [N] citation``;
4. without a judge, a claim no passage paraphrases and nothing in it is wrong is
   *unverified*: the answer's outcome is ``unverified`` (counted, never a root cause),
   each such claim listed with its closest passage. Low similarity is no proof.

Which cases: ``happy`` / ``edge``, and cases without a type when the session retrieved
or called a tool (:mod:`aem.metrics.applies`). No context at all: ``skip``, unless the
case says ``requires_context: true`` (then a structural ``fail``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from aem.evidence import (
    Citation,
    Claim,
    ClaimCheck,
    ClaimStatus,
    Grounding,
    Thresholds,
    check_claims,
    find_citations,
    grounding_of,
    resolve,
    split_claims,
)
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn, UnverifiedClaim
from aem.judges.base import JudgeConfigError
from aem.metrics import judged
from aem.metrics.applies import REQUIRES_CONTEXT, gets_groundedness, requires_context
from aem.metrics.base import BaseMetric, CaseFieldError, MetricContext, MetricSettings, result

NAME = "groundedness"
JUDGE_CHECK = "groundedness"


class GroundednessSettings(MetricSettings):
    similarity_threshold: float = Field(
        default=0.75,
        ge=0,
        le=1,
        description="cosine between a claim and its nearest context sentence at or above "
        "which the sentence supports it (calibrated with `aem calibrate` on "
        "bench/groundedness/pairs.jsonl)",
    )
    overlap_threshold: float = Field(
        default=0.75,
        ge=0,
        le=1,
        description="share of the claim's word stems its nearest sentence holds at or above "
        "which it supports the claim (what carries languages the embedding model reads poorly)",
    )
    require_citation: Literal["documents", "always", "never"] = Field(
        default="documents",
        description="when an answer must cite a source [N]: when the context holds retrieved "
        "documents, always, or never",
    )
    requires_context: bool = Field(
        default=False,
        description="an answer with no retrieval and no tool result behind it fails instead "
        "of being skipped (a case's own `requires_context` wins)",
    )
    date_slack_days: int = Field(
        default=0, ge=0, description="a stated day this close to a date in the context counts"
    )
    judge: str | None = Field(
        default=None,
        description='judge for the claims (a [judges.<name>] table); none or "embedded": '
        "the embedded default",
    )


def _dangling(citations: list[Citation], grounding: Grounding) -> list[Citation]:
    return [c for c in citations if resolve(c, grounding.sources) is None]


def _count(grounding: Grounding) -> str:
    if grounding.documents:
        return f"{grounding.documents} document(s) were retrieved"
    return f"{grounding.tool_results} tool result(s) were returned"


class Groundedness(BaseMetric[GroundednessSettings]):
    name = NAME
    evaluator_type = "embedding"
    band = "grounding"
    Settings = GroundednessSettings
    case_fields = (REQUIRES_CONTEXT,)

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        if not gets_groundedness(context):
            return
        try:
            REQUIRES_CONTEXT.value(context.case)
        except CaseFieldError as exc:
            yield from (result(NAME, t, Outcome.ERROR, str(exc)) for t in context.answers)
            return
        for turn in context.answers:
            if (turn.text or "").strip():
                yield self.judge_answer(context, turn)

    def judge_answer(self, context: MetricContext, turn: Turn) -> MetricResult:
        """One answer's verdict: dangling citation, unsupported claim, no citation."""
        text = turn.text or ""
        grounding = grounding_of(context.session, context.graph, turn, context.services.compare)
        claims = split_claims(text)
        if not claims:
            return result(NAME, turn, Outcome.SKIP, "the answer states no checkable claim")
        if grounding.empty and requires_context(context, self.settings.requires_context):
            return _no_context(turn)
        if grounding.empty:
            return result(
                NAME,
                turn,
                Outcome.SKIP,
                "no retrieval and no tool result before this answer: nothing to rest on "
                "(set requires_context: true in the case to fail it instead)",
            )
        citations = find_citations(text)
        dangling = _dangling(citations, grounding)
        if dangling:
            first = dangling[0]
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"dangling citation {first.marker}: it points at no source the agent had "
                f"({_count(grounding)})",
                score=0.0,
                evidence=[
                    Evidence(span_id=turn.span_ids[0], field="citation", actual=first.marker)
                ],
            )
        if judged.wants_judge(self.settings.judge):
            return self._judged(context, turn, grounding, claims, bool(citations))
        return self._embedded(context, turn, grounding, claims, bool(citations))

    def _needs_citation(self, grounding: Grounding) -> bool:
        policy = self.settings.require_citation
        return policy == "always" or (policy == "documents" and grounding.documents > 0)

    def _embedded(
        self,
        context: MetricContext,
        turn: Turn,
        grounding: Grounding,
        claims: list[Claim],
        cited: bool,
    ) -> MetricResult:
        """Fail on proof only: a contradicted claim or an unsupported value; else the
        missing citation; else ``unverified`` when some claim no passage paraphrases
        (nothing wrong found, nothing confirmed); else pass."""
        thresholds = Thresholds(
            self.settings.similarity_threshold,
            self.settings.overlap_threshold,
            self.settings.date_slack_days,
            context.services.verdicts.unsupported_fails,
        )
        checks = check_claims(
            [c.text for c in claims], grounding, context.comparator, thresholds, turn.text
        )
        wrong = [c for c in checks if c.proven_wrong]
        doubts = [unverified_claim(c) for c in checks if c.status is ClaimStatus.UNVERIFIED]
        score = sum(c.supported for c in checks) / len(checks)
        threshold = self.settings.similarity_threshold
        if wrong:
            return _unsupported(turn, wrong, len(checks), score, threshold, doubts)
        if not cited and self._needs_citation(grounding):
            supported = f"{len(checks) - len(doubts)} claim(s) supported, but "
            found = _uncited(turn, grounding, supported)
            return found.model_copy(update={"unverified": doubts})
        if doubts:
            why = next(c.why for c in checks if c.status is ClaimStatus.UNVERIFIED)
            return _undecided(turn, doubts, len(checks), score, threshold, why)
        lowest = min(checks, key=lambda c: c.similarity)
        return result(
            NAME,
            turn,
            Outcome.PASS,
            f"{len(checks)} claim(s) supported by the context (weakest: score "
            f"{lowest.similarity:.2f} from {lowest.passage.source if lowest.passage else '-'})"
            + ("; cites its sources" if cited else "")
            + ("" if grounding.prose else "; records only: values and names checked"),
            score=score,
            threshold=threshold,
        )

    def _judged(
        self,
        context: MetricContext,
        turn: Turn,
        grounding: Grounding,
        claims: list[Claim],
        cited: bool,
    ) -> MetricResult:
        name = str(self.settings.judge)
        if not cited and self._needs_citation(grounding):
            return _uncited(turn, grounding)
        try:
            judge = judged.build(name, context)
        except JudgeConfigError as exc:
            return result(NAME, turn, Outcome.ERROR, f"judge error: {exc}")
        text = judged.render(grounding, context.session.user_inputs, turn.text or "")
        verdict = judged.ask(judge, JUDGE_CHECK, text)
        return judged.metric_verdict(NAME, turn, verdict)


def _uncited(turn: Turn, grounding: Grounding, supported: str = "") -> MetricResult:
    """The structural fail of an answer citing nothing where a citation is due."""
    return result(
        NAME,
        turn,
        Outcome.FAIL,
        f"no [N] citation: {supported}no source is cited ({_count(grounding)})",
        score=0.0,
        evidence=[
            Evidence(
                span_id=turn.span_ids[0],
                field="citation",
                expected=f"a [N] citation of one of the {len(grounding.sources)} source(s)",
                detail=f"the answer cites no source; {_count(grounding)}",
            )
        ],
    )


def _no_context(turn: Turn) -> MetricResult:
    """The structural fail of an answer the case requires to rest on a retrieval or a
    tool result, given with neither before it."""
    return result(
        NAME,
        turn,
        Outcome.FAIL,
        "no retrieval and no tool result before this answer, and the case requires context "
        "(requires_context)",
        score=0.0,
        evidence=[
            Evidence(
                span_id=turn.span_ids[0],
                field="requires_context",
                expected="a retrieval or a tool result before the answer",
                actual="none",
                detail="the answer rests on nothing the agent found",
            )
        ],
    )


def unverified_claim(check: ClaimCheck) -> UnverifiedClaim:
    passage = check.passage
    return UnverifiedClaim(
        claim=check.claim,
        closest=passage.text if passage else None,
        source=passage.source if passage else None,
        score=round(check.similarity, 4),
    )


def _undecided(
    turn: Turn,
    doubts: list[UnverifiedClaim],
    total: int,
    score: float,
    threshold: float,
    why: str = "",
) -> MetricResult:
    """``unverified``: nothing proven wrong, but claims no passage confirms — what a
    judge (``metrics.groundedness.judge``) would decide; never a root cause. ``why`` is
    the first doubt's reason (a value or name no source holds, a restriction added)."""
    first = doubts[0]
    closest = f"; closest passage ({first.source}): {first.closest!r}" if first.closest else ""
    reason = f" ({why})" if why else ""
    return result(
        NAME,
        turn,
        Outcome.UNVERIFIED,
        f"{len(doubts)} of {total} claim(s) unverified: no passage confirms them and nothing "
        f"in them contradicts the context; a judge (metrics.groundedness.judge) would decide "
        f"them — first: {first.claim!r}{reason}{closest}",
        score=score,
        threshold=threshold,
        unverified=doubts,
    )


def claim_proof(turn: Turn, check: ClaimCheck) -> Evidence:
    """What a reviewer checks: the stated value (or the claim) and the closest candidate
    in the context (or the passage it contradicts)."""
    source = check.passage.source if check.passage else "-"
    return Evidence(
        span_id=turn.span_ids[0],
        field=str(check.status),
        actual=check.stated or check.claim,
        expected=check.closest,
        detail=f"{check.why} — claim {check.claim!r}; passage from {source}, "
        f"score {check.similarity:.2f}",
    )


def _unsupported(
    turn: Turn,
    wrong: list[ClaimCheck],
    total: int,
    score: float,
    threshold: float,
    doubts: list[UnverifiedClaim],
) -> MetricResult:
    """The failed verdict quoting the first claim proven wrong and its closest passage."""
    first = wrong[0]
    passage = first.passage
    closest = (
        f"; closest passage ({passage.source}, score {first.similarity:.2f}): {passage.text!r}"
        if passage
        else ""
    )
    more = f" ({len(wrong)} of {total} claims unsupported)" if len(wrong) > 1 else ""
    return result(
        NAME,
        turn,
        Outcome.FAIL,
        f"unsupported claim {first.claim!r}: {first.why}{closest}{more}",
        score=score,
        threshold=threshold,
        evidence=[claim_proof(turn, c) for c in wrong[:10]],
        unverified=doubts,
    )
