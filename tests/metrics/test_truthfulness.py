"""correctness.truthfulness: facts contradicted, values unsupported, derived values allowed."""

from __future__ import annotations

import json

from aem.config import load_config
from aem.foundation.model import MetricResult
from aem.metrics.truthfulness import Truthfulness, TruthfulnessSettings
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric
from tests.conftest import SAMPLES, run_audit, session

WEATHER = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()
ANSWER = "Paris is rainy (14C) and 2+3=5."


def _answer_verdict(answer: str, *, with_results: bool = True, **settings: object) -> MetricResult:
    """The verdict on the answer of: get_weather(Paris) → add(2, 3) → answer."""
    weather = {"city": "Paris", "sky": "rainy", "temperature": "14C"}
    session = make_session(
        make_tool_call(
            "get_weather", {"city": "Paris"}, **({"result": weather} if with_results else {})
        ),
        make_tool_call("add", {"a": 2, "b": 3}, result=5),
        make_turn("answer", text=answer, seen_inputs=["What is the weather in Paris, and 2+3?"]),
    )
    metric = Truthfulness(TruthfulnessSettings.model_validate(settings))
    return run_metric(metric, session)[-1]


def test_a_measurement_against_the_one_of_its_unit_fails_an_unbound_one_is_a_doubt() -> None:
    verdict = _answer_verdict("Paris is rainy (37C), wind 1,250 m.")
    assert verdict.outcome == "fail"
    assert "'37C'" in verdict.explanation and "14C" in verdict.explanation
    # No result measures in metres: the wind is not proven wrong, only left unverified.
    assert [c.claim for c in verdict.unverified] == ["1,250 m"]
    alone = _answer_verdict("Paris is rainy, wind 1,250 m.")
    assert alone.outcome == "unverified" and "1,250 m" in alone.explanation


def test_supported_values_and_written_out_arithmetic_pass() -> None:
    # 14 and 5 are seen; the answer writes $14 + $5 = $19 out, and the arithmetic holds.
    verdict = _answer_verdict("Paris is rainy (14C); $14 + $5 = $19.")
    assert verdict.outcome == "pass" and "$19 = $14 + $5" in verdict.explanation


def test_coincidental_arithmetic_does_not_support_a_value() -> None:
    # $19 = 14 + 5, but nothing says the answer is a sum: a made-up price.
    verdict = _answer_verdict("Paris is rainy; the museum costs $19.")
    assert verdict.outcome == "unverified" and "'$19'" in verdict.explanation
    # Written-out arithmetic that does not hold is no support either.
    assert _answer_verdict("Paris is rainy (14C); $14 + $5 = $21.").outcome == "fail"


def test_arithmetic_written_in_latex_supports_each_link_of_the_chain() -> None:
    # 14 and 5 are seen; every later value is worked out in the open, each link checkable.
    verdict = _answer_verdict(r"\[ \mu = \frac{14 \times 14 \times 5}{4} = \frac{980}{4} = 245 \]")
    assert verdict.outcome == "pass", verdict.explanation
    assert "980 = 14 * 14 * 5" in verdict.explanation and "245 = 980/4" in verdict.explanation
    rooted = _answer_verdict(r"\( \sqrt{14 \times 5} \approx 8.37 \) (14C)")
    assert rooted.outcome == "pass", rooted.explanation


def test_written_arithmetic_that_does_not_hold_fails_quoting_the_value() -> None:
    wrong_link = _answer_verdict(r"\[ \mu = \frac{14 \times 5}{4} = \frac{70}{4} = 18.5 \]")
    assert wrong_link.outcome == "fail" and "'18.5'" in wrong_link.explanation
    wrong_sum = _answer_verdict("Paris (14C): 14 * 14 + 5 = 211 in all.")
    assert wrong_sum.outcome == "fail" and "'211'" in wrong_sum.explanation
    # Rounding after "≈" is allowed to the digits written, no further.
    assert _answer_verdict(r"\( \sqrt{14 \times 5} \approx 8.5 \)").outcome == "fail"


def test_an_in_page_link_target_is_a_reference_not_a_stated_value() -> None:
    verdict = _answer_verdict("Paris is rainy (14C).[[7]](#cite_note-Meteo2024-7)")
    assert verdict.outcome == "pass", verdict.explanation
    # The link's visible text is still read: an invented number there is caught.
    assert _answer_verdict("Paris is rainy (31C).[[7]](#cite_note-7)").outcome == "fail"


def test_without_the_tool_result_it_says_so_instead_of_guessing() -> None:
    verdict = _answer_verdict("Paris is rainy (37C), wind 1,250 m.", with_results=False)
    assert verdict.outcome == "skip" and "no result" in verdict.explanation


def test_a_stated_value_against_the_facts() -> None:
    session = make_session(make_tool_call("get_refunds", {"period": "2025-03"}, result=[]))
    case = make_case(facts={"period": "2026-03"})
    [verdict] = run_metric(Truthfulness(), session, case)
    assert verdict.outcome == "fail" and "2025-03" in verdict.explanation


def test_support_check_can_be_switched_off() -> None:
    assert _answer_verdict("Paris is rainy (37C).", require_support=False).outcome == "skip"


def test_the_switch_through_the_cli_with_a_quoted_key(tmp_path) -> None:
    lines = [
        json.dumps(json.loads(line)).replace(ANSWER, "Paris is rainy (37C).") for line in WEATHER
    ]
    path = tmp_path / "weather.jsonl"
    path.write_text("\n".join(lines))
    key = 'metrics."correctness.truthfulness".require_support=false'
    assert load_config(overrides=[key]).metrics.tables["correctness.truthfulness"] == {
        "require_support": False
    }
    _, report, _ = run_audit(str(path), "--set", key)
    answer = session(report, "weather-genai")["turns"][-1]
    verdict = next(m for m in answer["metrics"] if m["name"] == "correctness.truthfulness")
    assert verdict["outcome"] == "skip"
