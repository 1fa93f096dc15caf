"""tool_choice and argument_validity through the CLI: the case decides what was expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES, run_audit, session

WEATHER = SAMPLES / "weather_genai.otlp.jsonl"


def _audit(tmp_path: Path, case: dict[str, Any], trace: Path = WEATHER) -> dict[str, Any]:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"session_id": "weather-genai", **case}) + "\n")
    _, report, _ = run_audit(str(trace), "--cases", str(cases))
    return session(report, "weather-genai")


def _verdicts(result: dict[str, Any], metric: str) -> dict[str, tuple[str, str]]:
    return {
        t["name"]: (m["outcome"], m["explanation"])
        for t in result["turns"]
        for m in t["metrics"]
        if m["name"] == metric
    }


def test_equivalent_formats_pass(tmp_path: Path) -> None:
    result = _audit(
        tmp_path,
        {
            "expected_tool_calls": [
                {"name": "add", "arguments": {"a": "2", "b": 3.0}},
                {"name": "get_weather", "arguments": {"city": " PARIS "}},
            ]
        },
    )
    assert result["root_causes"] == []
    assert {k: v[0] for k, v in _verdicts(result, "argument_validity").items()} == {
        "get_weather": "pass",
        "add": "pass",
    }


def test_wrong_argument_names_the_argument_and_both_values(tmp_path: Path) -> None:
    result = _audit(
        tmp_path,
        {
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "London"}},
                {"name": "add", "arguments": {"a": 2, "b": 3}},
            ]
        },
    )
    outcome, why = _verdicts(result, "argument_validity")["get_weather"]
    assert outcome == "fail" and "city" in why and "London" in why and "Paris" in why
    [cause] = result["root_causes"]
    assert cause["name"] == "get_weather" and cause["metrics"] == ["argument_validity"]
    answer = result["turns"][-1]
    assert answer["label"] == "ok"  # it passed its own metrics; nothing to inherit


def test_missing_call_fails_the_final_turn(tmp_path: Path) -> None:
    result = _audit(
        tmp_path,
        {
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "get_time", "arguments": {"city": "Paris"}},
            ]
        },
    )
    outcome, why = _verdicts(result, "tool_choice")["weather_agent"]
    assert outcome == "fail" and "get_time" in why
    assert result["root_causes"][0]["kind"] == "answer"


def test_extra_call_and_match_tools(tmp_path: Path) -> None:
    extra = _audit(
        tmp_path, {"expected_tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}
    )
    assert _verdicts(extra, "tool_choice")["get_weather"][0] == "fail"
    scoped = _audit(
        tmp_path,
        {
            "expected_tool_calls": [
                {"name": "add", "arguments": {"a": 2, "b": 3}},
                {"name": "lookup", "arguments": {}},
            ],
            "match_tools": ["add"],
        },
    )
    verdicts = _verdicts(scoped, "tool_choice")
    assert verdicts["get_weather"][0] == "skip" and verdicts["add"][0] == "pass"
    assert scoped["root_causes"] == []  # `lookup` is outside match_tools: not required


def test_declared_order_is_enforced_only_for_its_pair(tmp_path: Path) -> None:
    calls = [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "add", "arguments": {"a": 2, "b": 3}},
    ]
    fine = _audit(tmp_path, {"expected_tool_calls": calls, "order": [[0, 1]]})
    assert fine["root_causes"] == []
    wrong = _audit(tmp_path, {"expected_tool_calls": calls, "order": [[1, 0]]})
    outcome, why = _verdicts(wrong, "tool_choice")["get_weather"]
    assert outcome == "fail" and "order" in why


def test_declared_json_schema_is_checked_without_a_case(tmp_path: Path) -> None:
    lines = []
    for line in WEATHER.read_text().splitlines():
        lines.append(
            line.replace('{\\"city\\": \\"Paris\\"}', '{\\"city\\": 5}').replace(
                '{\\"city\\":\\"Paris\\"}', '{\\"city\\":5}'
            )
        )
    trace = tmp_path / "bad_args.jsonl"
    trace.write_text("\n".join(lines))
    assert '\\"city\\": 5' in trace.read_text() or '\\"city\\":5' in trace.read_text()
    _, report, _ = run_audit(str(trace))
    result = session(report, "weather-genai")
    outcome, why = _verdicts(result, "argument_validity")["get_weather"]
    assert outcome == "fail" and "JSON Schema" in why and "city" in why
