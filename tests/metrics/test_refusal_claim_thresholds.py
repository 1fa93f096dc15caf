"""refusal checks a sentence beside its refusal like a groundedness claim, with the
thresholds ``[metrics.groundedness]`` sets: a stricter ``similarity_threshold`` there turns
a paraphrase the default accepts into a doubt, on refusal's verdict too."""

from __future__ import annotations

from aem.config import AemConfig
from aem.foundation.model import MetricResult, Outcome
from aem.metrics.refusal import Refusal
from tests.groundedness_kit import evaluate, rag_session, results

RETURNS = [
    "Returns are accepted within 30 days of delivery.",
    "Refunds are paid to the original card within 5 business days.",
    "Gift cards cannot be returned.",
]
# Declines, then paraphrases the refund passage: its cosine to that passage lies between
# 0.80 and 0.85, above groundedness's default 0.75.
ANSWER = "I don't know whether we offer gift wrapping. Refunds go back to the card you paid with."


def _refusal(groundedness: dict[str, float]) -> MetricResult:
    config = AemConfig.model_validate({"metrics": {"groundedness": groundedness}})
    session = rag_session(ANSWER, RETURNS, question="Do you sell gift wrapping?")
    (found,) = results(evaluate(session, [Refusal()], {"type": "oos"}, config), "refusal")
    return found


def test_groundedness_similarity_threshold_decides_the_claim_beside_a_refusal() -> None:
    assert _refusal({}).outcome is Outcome.PASS
    assert _refusal({"similarity_threshold": 0.8}).outcome is Outcome.PASS
    strict = _refusal({"similarity_threshold": 0.85})
    assert strict.outcome is Outcome.UNVERIFIED, strict.explanation
    assert [doubt.claim for doubt in strict.unverified] == [
        "Refunds go back to the card you paid with."
    ]
