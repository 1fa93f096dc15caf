"""What the tools declared on a span say they do: MCP-style annotations, any dialect.

Why apart from the schemas: ``tool_definitions`` gives each tool's parameter schema; a
tool's ``annotations`` (``readOnlyHint``, ``destructiveHint``, as MCP's ``tools/list``
returns them and agent frameworks copy into the model request) tell whether a call only
reads. Read from the attributes every dialect declares its tools in — ``gen_ai.tool.
definitions``, Vercel AI's ``ai.prompt.tools``, OpenInference's ``llm.tools.N.tool.
json_schema`` — with the annotations beside the function or inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import parse_jsonish
from collectors.dialects.flatten import unflatten


def _mentions(raw: Any) -> bool:
    """Whether a declaration may hold annotations (most hold none: not parsed again)."""
    return not isinstance(raw, str) or "annotations" in raw


def _declared(span: SpanRecord) -> Iterable[Any]:
    """Every tool declaration on the span that may carry annotations, in any of the
    known attributes."""
    attributes = span.attributes
    for key in ("gen_ai.tool.definitions", "ai.prompt.tools"):
        raw = attributes.get(key)
        found = parse_jsonish(raw) if raw is not None and _mentions(raw) else None
        if isinstance(found, list):
            yield from (parse_jsonish(item) for item in found)
    if "llm.tools.0.tool.json_schema" not in attributes and "llm.tools" not in attributes:
        return
    for item in unflatten(attributes, "llm.tools."):
        tool = item.get("tool", item) if isinstance(item, dict) else None
        if isinstance(tool, dict) and _mentions(tool.get("json_schema")):
            yield parse_jsonish(tool.get("json_schema"))


def tool_annotations(span: SpanRecord) -> dict[str, dict[str, Any]]:
    """``{tool name: its annotations}`` for the tools declared with annotations.

    >>> span = SpanRecord(trace_id="t", span_id="s", parent_span_id=None, name="chat",
    ...     start_unix_nano=0, end_unix_nano=1, attributes={"gen_ai.tool.definitions":
    ...     '[{"name": "ls", "annotations": {"readOnlyHint": true}}]'})
    >>> tool_annotations(span)
    {'ls': {'readOnlyHint': True}}
    """
    out: dict[str, dict[str, Any]] = {}
    for item in _declared(span):
        if not isinstance(item, Mapping):
            continue
        nested = item.get("function")
        function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else item
        name = function.get("name") or item.get("name")
        annotations = function.get("annotations") or item.get("annotations")
        if name and isinstance(annotations, Mapping):
            out[str(name)] = dict(annotations)
    return out
