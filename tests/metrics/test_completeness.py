"""correctness.completeness: key points covered anywhere the agent answered the user."""

from __future__ import annotations

from aem.foundation.model import MetricResult
from aem.metrics.completeness import Completeness, CompletenessSettings
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric


def _completeness(key_points: list[str], threshold: float | None = None) -> MetricResult:
    session = make_session(
        make_tool_call("get_weather", {"city": "Paris"}, result="rainy, 14C"),
        make_turn("answer", text="Paris is rainy (14C) and 2+3=5."),
    )
    settings = CompletenessSettings(key_point_threshold=threshold) if threshold else None
    [verdict] = run_metric(Completeness(settings), session, make_case(key_points=key_points))
    return verdict


def test_values_and_words_cover_a_point() -> None:
    verdict = _completeness(["2+3=5", "Paris is rainy", "14 C in Paris"])
    assert verdict.outcome == "pass" and verdict.score == 1.0


def test_a_point_the_answer_never_touches_is_listed() -> None:
    verdict = _completeness(["2+3=5", "the hotel booking reference"])
    assert verdict.outcome == "fail" and verdict.score == 0.5
    assert "hotel booking reference" in verdict.explanation
    assert verdict.threshold is not None


def test_a_different_value_is_not_coverage_by_words() -> None:
    # With the embedding bar out of reach, only the value-aware word check can cover.
    for point, outcome in (("2+3=5", "pass"), ("2+3=6", "fail"), ("rainy in Rome", "fail")):
        verdict = _completeness([point], threshold=0.99)
        assert verdict.outcome == outcome, point
        assert verdict.threshold == 0.99


def test_coverage_spans_every_answer_and_lands_on_the_last() -> None:
    session = make_session(
        make_turn("answer", text="Paris is rainy."),
        make_turn("answer", text="And 2+3=5."),
        make_turn("answer", text="A sub-agent's note about hotels.", context="sub"),
    )
    results = run_metric(Completeness(), session, make_case(key_points=["2+3=5", "Paris is rainy"]))
    assert [(r.turn_id, r.outcome) for r in results] == [("t2", "pass")]
