"""``refusal``: on an out-of-scope question (case ``type: oos``) the answer must say
honestly that the agent does not know or cannot help — offering a human or asking for
contact details is fine — instead of stating a plausible fact it could not have found.

Judged on ``oos`` cases only (:mod:`aem.metrics.applies`), on the answer that responds
to the out-of-scope question: the first answer to the user after it (the first whose model
input holds the case's ``question``, when the trace shows inputs), passing over a greeting
or a question back to the user, which answer nothing yet. An earlier answer was to
something else, a later one to a follow-up. The embedded default, English and Russian:

* a sentence declines when it has a cue phrase (``I don't know``, ``не знаю``…) or its
  embedding is close to one of AEM's refusal exemplars (:mod:`aem.evidence.refusal_cues`);
* no value (number, price, date, id) may be stated that the context does not hold (the
  question's own date may be repeated);
* every other sentence — not declining, not offering a human — must be supported by
  the context like a groundedness claim (``[metrics.groundedness]``'s thresholds): "I
  don't know, but usually it takes 3 days" is an invented fact behind a polite opening;
* escalating is honest too: an answer that says what the context does hold and offers a
  human (or asks for contacts) passes without a refusal sentence.

With a judge configured, the judge decides (``aem/judges/prompts/refusal.v1.txt``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import Field

from aem.compare.embedder import TextEmbedder
from aem.compare.extract import extract_claims
from aem.evidence import (
    EXEMPLARS,
    ClaimCheck,
    Grounding,
    Thresholds,
    check_claims,
    cyrillic,
    declines_as_impossible,
    grounding_of,
    has_cue,
    is_claim,
    judge_value,
    offers_help,
    sentence_pieces,
    strip_citations,
)
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn, UnverifiedClaim
from aem.judges.base import JudgeConfigError
from aem.metrics import judged
from aem.metrics.applies import gets_refusal
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.metrics.groundedness import GroundednessSettings, claim_proof, unverified_claim

NAME = "refusal"
JUDGE_CHECK = "refusal"


# "I'm not sure, but it usually takes 3 days": what follows the "but" is a claim.
_BUT = re.compile(r",?\s+(?:but|however|although|though|но|однако|хотя)\s+", re.IGNORECASE)


def _after_but(sentence: str) -> str | None:
    parts = _BUT.split(sentence, maxsplit=1)
    return parts[1].strip() if len(parts) == 2 else None


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _responds(turn: Turn) -> bool:
    """Whether an answer says something to the question — declines, offers a human or
    states a claim — rather than only greeting or asking back."""
    sentences = sentence_pieces(turn.text or "")
    return any(has_cue(s) or offers_help(s) or is_claim(s) for s in sentences)


def responding_answer(answers: list[Turn], question: str | None) -> Turn | None:
    """The answer that responds to the out-of-scope ``question``: the first of
    ``answers`` after it was asked (the first whose model input holds it; all of them when
    no input shows it) that :func:`_responds`."""
    if question and question.strip():
        asked = [i for i, t in enumerate(answers) if _asked_in(t, _folded(question))]
        answers = answers[asked[0] :] if asked else answers
    return next((t for t in answers if _responds(t)), None)


def _asked_in(turn: Turn, question: str) -> bool:
    return any(question in _folded(text) for text in turn.seen_inputs)


def decline_scores(
    sentences: list[str], embedder: TextEmbedder, extra: list[str], *, english_model: bool
) -> list[float]:
    """How much each sentence reads as a refusal: 1.0 on a cue phrase or a request
    declined as impossible (whose reason is then checked as a claim), else its cosine to
    the nearest exemplar — 0.0 for a Cyrillic sentence under the bundled English model,
    which cannot tell a Russian refusal from a Russian statement (cues decide there)."""
    if not sentences:
        return []
    exemplars = [*EXEMPLARS, *extra]
    vectors = embedder.encode([*sentences, *exemplars])
    cosines = vectors[: len(sentences)] @ vectors[len(sentences) :].T
    return [
        1.0
        if has_cue(sentence) or declines_as_impossible(sentence)
        else 0.0
        if english_model and cyrillic(sentence)
        else float(cosines[i].max())
        for i, sentence in enumerate(sentences)
    ]


def _invented_value(
    context: MetricContext, turn: Turn, grounding: Grounding
) -> MetricResult | None:
    """The verdict on the first value the answer states that nothing the agent found
    supports: a failure when a record contradicts it, or when retrieved passages are the
    context (a value none holds is invented by definition) or unsupported values fail;
    else ``unverified``. "(Passage 2)" names a source, so its number is no value stated."""
    settings = context.services.compare
    strict = context.services.verdicts.unsupported_fails
    for value in extract_claims(strip_citations(turn.text or ""), settings):
        verdict = judge_value(value, grounding.values, settings)
        if not verdict.open:
            continue
        evidence = [Evidence(span_id=turn.span_ids[0], field="value", actual=value.raw)]
        if verdict.proves(strict) or grounding.documents > 0:
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"states {value.raw!r}, which nothing the agent found supports: an "
                "invented fact, not an honest refusal",
                score=0.0,
                evidence=evidence,
            )
        doubt = UnverifiedClaim(claim=value.raw, closest=verdict.closest, source="tool results")
        return result(
            NAME,
            turn,
            Outcome.UNVERIFIED,
            f"states {value.raw!r}, which no tool result holds nor contradicts",
            unverified=[doubt],
        )
    return None


def _states_unsupported(
    turn: Turn, check: ClaimCheck, beside: str, threshold: float | None = None
) -> MetricResult:
    """The verdict on a claim beside the refusal (or the offer) that nothing supports: a
    failure when the context proves it wrong, else ``unverified``."""
    if not check.proven_wrong:
        return result(
            NAME,
            turn,
            Outcome.UNVERIFIED,
            f"{beside} states {check.claim!r}, which no passage confirms nor contradicts",
            threshold=threshold,
            unverified=[unverified_claim(check)],
        )
    return result(
        NAME,
        turn,
        Outcome.FAIL,
        f"{beside} states {check.claim!r}, which nothing the agent found supports: {check.why}",
        score=0.0,
        threshold=threshold,
        evidence=[claim_proof(turn, check)],
    )


def _thresholds(context: MetricContext) -> Thresholds:
    """The claim checks' thresholds: ``[metrics.groundedness]``'s ``similarity_threshold``
    and ``overlap_threshold`` (a sentence beside a refusal is checked like a groundedness
    claim, so the two metrics cannot disagree on one sentence), and the run's
    ``[verdicts] unsupported`` setting."""
    support = context.services.claim_support
    if support is None:
        defaults = GroundednessSettings()
        similarity, overlap = defaults.similarity_threshold, defaults.overlap_threshold
    else:
        similarity, overlap = support.similarity, support.overlap
    return Thresholds(
        similarity, overlap, unsupported_fails=context.services.verdicts.unsupported_fails
    )


class RefusalSettings(MetricSettings):
    similarity_threshold: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="cosine to the nearest refusal exemplar at or above which a sentence "
        "declines (cue phrases decline at any similarity; calibrated on "
        "bench/groundedness/refusals.jsonl)",
    )
    exemplars: list[str] = Field(
        default_factory=list,
        description="more refusal sentences to compare with (your agent's own phrasing)",
    )
    judge: str | None = Field(
        default=None,
        description='judge for the verdict (a [judges.<name>] table); none or "embedded": '
        "the embedded default",
    )


class Refusal(BaseMetric[RefusalSettings]):
    name = NAME
    evaluator_type = "embedding"
    band = "refusal"
    Settings = RefusalSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        if not gets_refusal(context):
            return
        answers = [t for t in context.answers if (t.text or "").strip()]
        question = context.case.question if context.case is not None else None
        answer = responding_answer(answers, question)
        if answer is None:
            turn = answers[-1] if answers else context.final_turn
            if turn is not None:
                why = "only greets or asks back" if answers else "gave no answer to judge"
                yield result(NAME, turn, Outcome.SKIP, f"the agent {why}")
            return
        yield self.judge_answer(context, answer)

    def judge_answer(self, context: MetricContext, turn: Turn) -> MetricResult:
        text = turn.text or ""
        grounding = grounding_of(context.session, context.graph, turn, context.services.compare)
        if judged.wants_judge(self.settings.judge):
            try:
                judge = judged.build(str(self.settings.judge), context)
            except JudgeConfigError as exc:
                return result(NAME, turn, Outcome.ERROR, f"judge error: {exc}")
            rendered = judged.render(grounding, context.session.user_inputs, text)
            return judged.metric_verdict(NAME, turn, judged.ask(judge, JUDGE_CHECK, rendered))
        return self._embedded(context, turn, grounding)

    def _declining(self, context: MetricContext, sentences: list[str]) -> list[tuple[str, float]]:
        """Each sentence with its refusal score (:func:`decline_scores`)."""
        scores = decline_scores(
            sentences,
            context.comparator.embedder,
            self.settings.exemplars,
            english_model=context.services.compare.embedding_model is None,
        )
        return list(zip(sentences, scores, strict=True))

    def _embedded(self, context: MetricContext, turn: Turn, grounding: Grounding) -> MetricResult:
        span = turn.span_ids[0]
        invented = _invented_value(context, turn, grounding)
        if invented is not None:
            return invented
        sentences = [s.strip() for s in sentence_pieces(turn.text or "") if s.strip()]
        scored = self._declining(context, sentences)
        threshold = self.settings.similarity_threshold
        declining = [(s, score) for s, score in scored if score >= threshold]
        if not declining and any(map(offers_help, sentences)):
            return self._escalation(context, turn, sentences, grounding)
        if not declining:
            best = max(scored, key=lambda item: item[1])
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"answers instead of declining: no sentence says it does not know (closest "
                f"to a refusal: {best[0]!r}, score {best[1]:.2f})",
                score=best[1],
                threshold=threshold,
                evidence=[
                    Evidence(
                        span_id=span,
                        field="text",
                        expected="a sentence declining the out-of-scope question",
                        actual=turn.text,
                        detail=f"closest to a refusal: {best[0]!r}, score {best[1]:.2f}",
                    )
                ],
            )
        declined = {s for s, _ in declining}
        rest = [s for s in sentences if s not in declined and not offers_help(s) and is_claim(s)]
        rest += [
            tail
            for s in declined
            if (tail := _after_but(s)) and is_claim(tail) and not offers_help(tail)
        ]
        failed = self._unsupported(context, rest, grounding)
        if failed is not None:
            return _states_unsupported(turn, failed, "declines, but also", threshold)
        reasons = [s for s in declined if declines_as_impossible(s) and not has_cue(s)]
        doubted = self._reasons(context, turn, reasons, grounding, threshold)
        if doubted is not None:
            return doubted
        offer = (
            " and offers a human or asks for contacts" if any(map(offers_help, sentences)) else ""
        )
        first, score = declining[0]
        return result(
            NAME,
            turn,
            Outcome.PASS,
            f"declines honestly ({first!r}, score {score:.2f}){offer}",
            score=score,
            threshold=threshold,
        )

    def _escalation(
        self, context: MetricContext, turn: Turn, sentences: list[str], grounding: Grounding
    ) -> MetricResult:
        """No refusal sentence, but an offer of a human: honest when every other
        sentence states only what the context holds."""
        claims = [s for s in sentences if not offers_help(s) and is_claim(s)]
        failed = self._unsupported(context, claims, grounding)
        if failed is not None:
            return _states_unsupported(turn, failed, "offers a human, but first")
        said = f" after {len(claims)} statement(s) the context supports" if claims else ""
        return result(
            NAME, turn, Outcome.PASS, f"escalates: offers a human or asks for contacts{said}"
        )

    def _reasons(
        self,
        context: MetricContext,
        turn: Turn,
        reasons: list[str],
        grounding: Grounding,
        threshold: float,
    ) -> MetricResult | None:
        """A request declined as impossible ("basic economy flights cannot be modified")
        is honest when the context states that rule. One the context proves wrong (a name
        or value it does not hold, a contradiction) fails, quoting the proof; one no
        passage states is ``unverified`` — a judge would decide it, it is no failure."""
        if not reasons:
            return None
        checks = check_claims(reasons, grounding, context.comparator, _thresholds(context))
        wrong = next((c for c in checks if c.proven_wrong), None)
        if wrong is not None:
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"declines as impossible for a reason the context contradicts: {wrong.why}",
                score=0.0,
                threshold=threshold,
                evidence=[claim_proof(turn, wrong)],
            )
        doubts = [unverified_claim(c) for c in checks if not c.supported]
        if not doubts:
            return None
        return result(
            NAME,
            turn,
            Outcome.UNVERIFIED,
            f"declines as impossible, but no passage states the rule it gives: "
            f"{doubts[0].claim!r}; a judge (metrics.refusal.judge) would decide it",
            threshold=threshold,
            unverified=doubts,
        )

    def _unsupported(
        self, context: MetricContext, claims: list[str], grounding: Grounding
    ) -> ClaimCheck | None:
        """The check of the first claim beside the refusal that the context does not
        support, one it proves wrong before any it merely cannot confirm."""
        checks = check_claims(claims, grounding, context.comparator, _thresholds(context))
        doubted = [c for c in checks if not c.supported]
        return next((c for c in doubted if c.proven_wrong), doubted[0] if doubted else None)
