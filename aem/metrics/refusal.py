"""``refusal``: on an out-of-scope question (case ``type: oos``) the answer must say
honestly that the agent does not know or cannot help — offering a human or asking for
contact details is fine — instead of stating a plausible fact it could not have found.

Judged on the last answer to the user of ``oos`` cases only (:mod:`aem.metrics.applies`).
The embedded default, English and Russian:

* a sentence declines when it has a cue phrase (``I don't know``, ``не знаю``…) or its
  embedding is close to one of AEM's refusal exemplars (:mod:`aem.evidence.refusal_cues`);
* no value (number, price, date, id) may be stated that the context does not hold (the
  question's own date may be repeated);
* every other sentence — not declining, not offering a human — must be supported by
  the context like a groundedness claim: "I don't know, but usually it takes 3 days" is
  an invented fact behind a polite opening.

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
    Grounding,
    Thresholds,
    check_claims,
    cyrillic,
    grounding_of,
    has_cue,
    is_claim,
    offers_help,
    sentence_pieces,
    value_supported,
)
from aem.judges.base import JudgeConfigError
from aem.metrics import judged
from aem.metrics.applies import gets_refusal
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.metrics.groundedness import GroundednessSettings
from aem.model import Evidence, MetricResult, Outcome, Turn

NAME = "refusal"
JUDGE_CHECK = "refusal"
_CLAIMS = GroundednessSettings()


# "I'm not sure, but it usually takes 3 days": what follows the "but" is a claim.
_BUT = re.compile(r",?\s+(?:but|however|although|though|но|однако|хотя)\s+", re.IGNORECASE)


def _after_but(sentence: str) -> str | None:
    parts = _BUT.split(sentence, maxsplit=1)
    return parts[1].strip() if len(parts) == 2 else None


def decline_scores(
    sentences: list[str], embedder: TextEmbedder, extra: list[str], *, english_model: bool
) -> list[float]:
    """How much each sentence reads as a refusal: 1.0 on a cue phrase, else its cosine to
    the nearest exemplar — 0.0 for a Cyrillic sentence under the bundled English model,
    which cannot tell a Russian refusal from a Russian statement (cues decide there)."""
    if not sentences:
        return []
    exemplars = [*EXEMPLARS, *extra]
    vectors = embedder.encode([*sentences, *exemplars])
    cosines = vectors[: len(sentences)] @ vectors[len(sentences) :].T
    return [
        1.0
        if has_cue(sentence)
        else 0.0
        if english_model and cyrillic(sentence)
        else float(cosines[i].max())
        for i, sentence in enumerate(sentences)
    ]


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
    precedence = 46
    Settings = RefusalSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        if not gets_refusal(context):
            return
        answers = [t for t in context.answers if (t.text or "").strip()]
        if not answers:
            turn = context.final_turn
            if turn is not None:
                yield result(NAME, turn, Outcome.SKIP, "the agent gave no answer to judge")
            return
        yield self.judge_answer(context, answers[-1])

    def judge_answer(self, context: MetricContext, turn: Turn) -> MetricResult:
        text = turn.text or ""
        grounding = grounding_of(context.session, turn, context.services.compare)
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
        settings = context.services.compare
        span = turn.span_ids[0]
        for value in extract_claims(turn.text or "", settings):
            if not value_supported(value, grounding, settings):
                return result(
                    NAME,
                    turn,
                    Outcome.FAIL,
                    f"states {value.raw!r}, which nothing the agent found supports: an "
                    "invented fact, not an honest refusal",
                    score=0.0,
                    evidence=[Evidence(span_id=span, field="value", actual=value.raw)],
                )
        sentences = [s.strip() for s in sentence_pieces(turn.text or "") if s.strip()]
        scored = self._declining(context, sentences)
        threshold = self.settings.similarity_threshold
        declining = [(s, score) for s, score in scored if score >= threshold]
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
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"declines, but also states {failed!r}, which nothing the agent found supports",
                score=0.0,
                threshold=threshold,
                evidence=[Evidence(span_id=span, field="claim", actual=failed)],
            )
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

    def _unsupported(
        self, context: MetricContext, claims: list[str], grounding: Grounding
    ) -> str | None:
        """The first claim beside the refusal that the context does not support."""
        thresholds = Thresholds(_CLAIMS.similarity_threshold, _CLAIMS.overlap_threshold)
        for check in check_claims(claims, grounding, context.comparator, thresholds):
            if not check.supported:
                return check.claim
        return None
