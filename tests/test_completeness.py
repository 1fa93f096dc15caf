"""correctness.completeness: key points covered anywhere the agent answered the user."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES, run_audit, session

WEATHER = SAMPLES / "weather_genai.otlp.jsonl"


def _completeness(tmp_path: Path, key_points: list[str]) -> dict:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"session_id": "weather-genai", "key_points": key_points}))
    _, report, _ = run_audit(str(WEATHER), "--cases", str(cases))
    answer = session(report, "weather-genai")["turns"][-1]
    return next(m for m in answer["metrics"] if m["name"] == "correctness.completeness")


def test_values_and_words_cover_a_point(tmp_path: Path) -> None:
    verdict = _completeness(tmp_path, ["2+3=5", "Paris is rainy", "14 C in Paris"])
    assert verdict["outcome"] == "pass" and verdict["score"] == 1.0


def test_a_point_the_answer_never_touches_is_listed(tmp_path: Path) -> None:
    verdict = _completeness(tmp_path, ["2+3=5", "the hotel booking reference"])
    assert verdict["outcome"] == "fail" and verdict["score"] == 0.5
    assert "hotel booking reference" in verdict["explanation"]
    assert verdict["threshold"] is not None


def test_a_different_value_is_not_coverage_by_words(tmp_path: Path) -> None:
    # With the embedding bar out of reach, only the value-aware word check can cover.
    strict = ["--set", 'metrics."correctness.completeness".key_point_threshold=0.99']
    cases = tmp_path / "cases.jsonl"
    for point, outcome in (("2+3=5", "pass"), ("2+3=6", "fail"), ("rainy in Rome", "fail")):
        cases.write_text(json.dumps({"session_id": "weather-genai", "key_points": [point]}))
        _, report, _ = run_audit(str(WEATHER), "--cases", str(cases), *strict)
        answer = session(report, "weather-genai")["turns"][-1]
        verdict = next(m for m in answer["metrics"] if m["name"] == "correctness.completeness")
        assert verdict["outcome"] == outcome, point
        assert verdict["threshold"] == 0.99
