"""``bench.groundedness.encoders``: int8 against fp32, claim by claim.

Why: the figure decides whether int8 may become the default encoder, so it must count
every claim the metric decided (not only the answers' outcomes, which hide a claim moving
between supported and unverified), pair them claim for claim, and leave the metric as it
found it (the bench records where the metric decides, it must not replace the decision).
"""

from __future__ import annotations

from aem.config import load_config
from aem.metrics import groundedness
from bench.groundedness.encoders import agreement, one_round
from bench.groundedness.speed import NO_CITATIONS, synthetic_sessions


def test_a_round_records_every_claim_and_restores_the_metric() -> None:
    original = groundedness.check_claims
    config = load_config(None, [NO_CITATIONS, "compare.embedding_threads=1"])
    sessions = synthetic_sessions(2, distinct=True)
    first = one_round(sessions, {}, config, "onnx")
    again = one_round(sessions, {}, config, "onnx")
    assert groundedness.check_claims is original
    assert len(first["outcomes"]) == 2
    assert all(first["claims"]) and len(first["claims"]) == 2
    same = agreement(first, again)
    assert same["claims"] == sum(len(c) for c in first["claims"]) > 2
    assert (same["claim_agreement"], same["answer_agreement"], same["flips"]) == (1.0, 1.0, [])


def test_a_claim_that_moves_is_counted_as_a_flip_even_when_the_outcome_stays() -> None:
    first = {
        "outcomes": ["unverified", "pass"],
        "claims": [[("a", "supported"), ("b", "unverified")], [("c", "supported")]],
    }
    other = {
        "outcomes": ["unverified", "pass"],
        "claims": [[("a", "unverified"), ("b", "unverified")], [("c", "supported")]],
    }
    found = agreement(first, other)
    assert found["flips"] == [("a", "supported", "unverified")]
    assert (found["claims"], found["claims_same"], found["answer_agreement"]) == (3, 2, 1.0)
