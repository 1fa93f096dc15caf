"""A judge's verdict as a metric result: the one converter every judged metric uses.

Why one: the LLM checks, ``judge.step`` and the judged groundedness and refusal metrics
all turn a :class:`~aem.judges.base.JudgeVerdict` into a result the same way — ``error``
stays an error (a judge error, outside pass rate and mean), a verdict the judge could not
give is ``skip``, never a pass or a fail. They differ only in how they word it: a check
scores against its ``threshold`` (0–10), a step-shaped request is a yes/no ``mistake``.
The judge's explanation is cut here, once for every judge kind (:func:`cut_explanation`).
"""

from __future__ import annotations

import json

from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.judges.base import JudgeVerdict

# How the explanation names the judge: checks and judge.step, the judged metrics.
CHECK_WHY = "judge: {judge} — {explanation}"
METRIC_WHY = "judge {judge}: {explanation}"
# A judge's explanation is kept to this many characters: a reply is the peer's text, and
# every evaluation stores it (a 10 MB explanation would be stored per evaluation).
MAX_EXPLANATION_CHARS = 2_000


def cut_explanation(text: str, limit: int = MAX_EXPLANATION_CHARS) -> str:
    """``text``, or its first ``limit`` characters and how many more were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [cut: {len(text) - limit:,} more characters]"


def usage_detail(verdict: JudgeVerdict) -> str | None:
    """The tokens the judge was billed, as the evidence detail a test run stores."""
    return json.dumps(verdict.usage, sort_keys=True) if verdict.usage else None


def verdict_outcome(verdict: JudgeVerdict, threshold: float | None) -> Outcome:
    """``error`` / ``skip`` as the judge said; else the score against ``threshold`` or,
    with no threshold, the ``mistake`` flag."""
    if verdict.status == "error":
        return Outcome.ERROR
    if verdict.status != "scored":
        return Outcome.SKIP
    if threshold is not None:
        if verdict.score is None:
            return Outcome.SKIP
        return Outcome.PASS if verdict.score >= threshold else Outcome.FAIL
    if verdict.mistake is None:
        return Outcome.SKIP
    return Outcome.FAIL if verdict.mistake else Outcome.PASS


def verdict_result(
    name: str,
    turn: Turn,
    verdict: JudgeVerdict,
    *,
    threshold: float | None = None,
    why: str = CHECK_WHY,
    detail: str | None = None,
    mistake_score: bool = False,
) -> MetricResult:
    """``verdict`` as ``name``'s result on ``turn``, the judge named in the evidence.

    A passed or failed scored verdict carries the judge's score; a yes/no one carries
    1 / 0 when ``mistake_score`` is set.
    """
    outcome = verdict_outcome(verdict, threshold)
    score: float | None = None
    if outcome in (Outcome.PASS, Outcome.FAIL):
        if threshold is not None:
            score = verdict.score
        elif mistake_score:
            score = 0.0 if verdict.mistake else 1.0
    evidence = [
        Evidence(
            span_id=turn.span_ids[0] if turn.span_ids else None,
            field="judge",
            actual=verdict.judge,
            detail=detail,
        )
    ]
    explanation = why.format(judge=verdict.judge, explanation=cut_explanation(verdict.explanation))
    return MetricResult.for_turn(
        name, turn, outcome, explanation, score=score, threshold=threshold, evidence=evidence
    )
