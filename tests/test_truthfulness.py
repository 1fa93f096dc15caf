"""correctness.truthfulness: facts contradicted, values unsupported, derived values allowed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES, run_audit, session

WEATHER = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()
ANSWER = "Paris is rainy (14C) and 2+3=5."


def _with_answer(tmp_path: Path, answer: str, drop_result: bool = False) -> Path:
    lines = []
    for line in WEATHER:
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for attribute in span["attributes"]:
                value = attribute["value"]
                if "stringValue" in value and ANSWER in value["stringValue"]:
                    value["stringValue"] = value["stringValue"].replace(ANSWER, answer)
            if drop_result:
                span["attributes"] = [
                    a for a in span["attributes"] if a["key"] != "gen_ai.tool.call.result"
                ]
        lines.append(json.dumps(document))
    path = tmp_path / "weather.jsonl"
    path.write_text("\n".join(lines))
    return path


def _truthfulness(report: dict) -> dict:
    answer = session(report, "weather-genai")["turns"][-1]
    assert answer["kind"] == "answer"
    return next(m for m in answer["metrics"] if m["name"] == "correctness.truthfulness")


def test_a_value_no_tool_returned_fails_with_the_closest_evidence(tmp_path: Path) -> None:
    code, report, _ = run_audit(str(_with_answer(tmp_path, "Paris is rainy (37C), wind 1,250 m.")))
    verdict = _truthfulness(report)
    assert verdict["outcome"] == "fail"
    assert "37C" in verdict["explanation"] and "closest: '14C'" in verdict["explanation"]
    assert "1,250" in verdict["explanation"]
    assert code == 1


def test_supported_and_derived_values_pass(tmp_path: Path) -> None:
    # 14 is seen; 19 = 14 + 5 is derived from two seen numbers, as a total would be.
    _, report, _ = run_audit(str(_with_answer(tmp_path, "Paris is rainy (14C); 14C + 5 = 19C.")))
    assert _truthfulness(report)["outcome"] == "pass"


def test_without_the_tool_result_it_says_so_instead_of_guessing(tmp_path: Path) -> None:
    path = _with_answer(tmp_path, "Paris is rainy (37C), wind 1,250 m.", drop_result=True)
    _, report, _ = run_audit(str(path))
    verdict = _truthfulness(report)
    assert verdict["outcome"] == "skip" and "no result" in verdict["explanation"]


def test_support_check_can_be_switched_off(tmp_path: Path) -> None:
    path = _with_answer(tmp_path, "Paris is rainy (37C), wind 1,250 m.")
    _, report, _ = run_audit(str(path), "--set", 'metrics."correctness.truthfulness".require_support=false')
    assert _truthfulness(report)["outcome"] == "skip"
