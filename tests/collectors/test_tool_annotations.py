"""Tools' MCP annotations read from every attribute a dialect declares tools in; a
declaration without them, or malformed, gives nothing and hides no other tool."""

from __future__ import annotations

import json
from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.annotations import tool_annotations

READ_ONLY = {"readOnlyHint": True}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}


def _span(attributes: dict[str, Any]) -> SpanRecord:
    return SpanRecord(trace_id="t" * 32, span_id="s" * 16, parent_span_id=None, name="chat",
                      attributes=attributes)  # fmt: skip


def test_genai_definitions_beside_or_inside_the_function() -> None:
    declared = [
        {"type": "function", "name": "ls", "annotations": READ_ONLY},
        {"type": "function", "function": {"name": "rm", "annotations": DESTRUCTIVE}},
        {"type": "function", "name": "plain", "parameters": {"type": "object"}},
        "not a tool",
    ]
    found = tool_annotations(_span({"gen_ai.tool.definitions": json.dumps(declared)}))
    assert found == {"ls": READ_ONLY, "rm": DESTRUCTIVE}


def test_vercel_ai_prompt_tools_as_json_strings() -> None:
    tools = [json.dumps({"type": "function", "name": "fetch_page", "annotations": READ_ONLY})]
    assert tool_annotations(_span({"ai.prompt.tools": tools})) == {"fetch_page": READ_ONLY}


def test_openinference_flattened_tool_schemas() -> None:
    schema = {"type": "function", "function": {"name": "query_db", "annotations": READ_ONLY}}
    attributes = {
        "llm.tools.0.tool.json_schema": json.dumps(schema),
        "llm.tools.1.tool.json_schema": json.dumps({"type": "function", "name": "x"}),
    }
    assert tool_annotations(_span(attributes)) == {"query_db": READ_ONLY}


def test_nothing_declared_or_unreadable_gives_nothing() -> None:
    assert tool_annotations(_span({})) == {}
    assert tool_annotations(_span({"gen_ai.tool.definitions": "[{not json annotations"})) == {}
    bad = json.dumps([{"name": "x", "annotations": "readOnly"}])  # not an object: no word
    assert tool_annotations(_span({"gen_ai.tool.definitions": bad})) == {}
