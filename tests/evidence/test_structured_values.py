"""OTLP "any" attributes arrive as JSON strings or as structured AnyValues: same turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES, run_audit, session

STRUCTURED_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.definitions",
}


def _any_value(value: Any) -> dict[str, Any]:
    """Python value → OTLP/JSON AnyValue, structured (kvlistValue / arrayValue)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {
            "kvlistValue": {
                "values": [{"key": k, "value": _any_value(v)} for k, v in value.items()]
            }
        }
    return {}


def _structured_copy(tmp_path: Path) -> tuple[Path, int]:
    converted = 0
    lines = []
    for line in (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines():
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for attribute in span["attributes"]:
                if attribute["key"] in STRUCTURED_KEYS:
                    attribute["value"] = _any_value(json.loads(attribute["value"]["stringValue"]))
                    converted += 1
        lines.append(json.dumps(document))
    path = tmp_path / "structured.jsonl"
    path.write_text("\n".join(lines))
    return path, converted


def test_structured_and_string_attributes_give_the_same_verdicts(tmp_path: Path) -> None:
    structured, converted = _structured_copy(tmp_path)
    assert converted >= 4
    assert "kvlistValue" in structured.read_text() and "arrayValue" in structured.read_text()
    _, from_strings, _ = run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"))
    _, from_structures, _ = run_audit(str(structured))
    a = session(from_strings, "weather-genai")["turns"]
    b = session(from_structures, "weather-genai")["turns"]
    assert [(t["kind"], t["name"], t["label"]) for t in a] == [
        (t["kind"], t["name"], t["label"]) for t in b
    ]
    assert [t["kind"] for t in b] == ["tool_call", "tool_call", "answer"]
    validity = {
        t["name"]: m["outcome"] for t in b for m in t["metrics"] if m["name"] == "argument_validity"
    }
    assert validity["get_weather"] == "pass"  # the structured schema was read and applied
