"""Mutation fuzzer: no single wrong-typed field of an OTLP/JSON record may abort ``aem audit``.

Every node of a valid record (resource, scope, every field of every span, down to the
``intValue`` of an attribute) is replaced, one at a time, by each JSON type it is not:
number, string, bool, null, list, object. All mutants go through the real CLI in one file,
one per line, each in its own trace, so the assertions hold per line:

* the run ends with a report (exit 0 or 1), never a traceback;
* a mutant that proto3 JSON would refuse is named by an issue with its file and line;
* a mutant that proto3 JSON accepts (``null`` for "default", a number for an ``int64``
  or an enum) keeps its spans: its trace reaches a session, no span of it is skipped.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import run_audit

Path_ = tuple[str | int, ...]

REPLACEMENTS: tuple[Any, ...] = (7, "mutant", True, None, [], {})

_INT64 = {
    "startTimeUnixNano",
    "endTimeUnixNano",
    "timeUnixNano",
    "intValue",
    "droppedAttributesCount",
    "droppedEventsCount",
    "droppedLinksCount",
}
_ENUM = {"kind", "code"}
_NUMBER = {"doubleValue"}
_BOOL = {"boolValue"}
_REQUIRED_ID = {"traceId", "spanId"}
_OPTIONAL_ID = {"parentSpanId"}
_HOLDS_SPANS = {"resourceSpans", "scopeSpans", "spans"}


def _string(value: str) -> dict[str, str]:
    return {"stringValue": value}


def _kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def _span(trace: str, span_id: str, parent: str | None, name: str, **fields: Any) -> dict:
    """A span of the base record; ``fields`` (times offset from the record's start, kind,
    attributes, events...) complete it."""
    start = 1_776_852_000_000_000_000
    span: dict[str, Any] = {"traceId": trace, "spanId": span_id}
    if parent:
        span["parentSpanId"] = parent
    begin, end = fields.pop("ms")
    span["name"] = name
    span["kind"] = fields.pop("kind", 1)
    span["startTimeUnixNano"] = str(start + begin * 1_000_000)
    span["endTimeUnixNano"] = str(start + end * 1_000_000)
    return span | fields


_OUTPUT = [
    {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {}}],
    }
]
_INPUT = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]


def _chat_attributes(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """One attribute of each ``AnyValue`` kind, on a chat span that asks for a tool."""
    return [
        _kv("gen_ai.operation.name", _string("chat")),
        conversation,
        _kv("gen_ai.input.messages", _string(json.dumps(_INPUT))),
        _kv("gen_ai.output.messages", _string(json.dumps(_OUTPUT))),
        _kv("gen_ai.response.finish_reasons", {"arrayValue": {"values": [_string("tool_calls")]}}),
        _kv("gen_ai.usage.input_tokens", {"intValue": "40"}),
        _kv("gen_ai.request.temperature", {"doubleValue": 0.2}),
        _kv("gen_ai.request.stream", {"boolValue": False}),
        _kv("fuzz.kv", {"kvlistValue": {"values": [_kv("a", {"intValue": "1"})]}}),
    ]


def _tool_attributes() -> list[dict[str, Any]]:
    return [
        _kv("gen_ai.operation.name", _string("execute_tool")),
        _kv("gen_ai.tool.name", _string("get_weather")),
        _kv("gen_ai.tool.call.id", _string("call_1")),
        _kv("gen_ai.tool.call.arguments", _string('{"city":"Paris"}')),
        _kv("gen_ai.tool.call.result", _string("rainy, 14C")),
    ]


_RESOURCE = {
    "attributes": [
        _kv("service.name", _string("fuzz-agent")),
        _kv("process.pid", {"intValue": "4242"}),
    ]
}
_SCOPE = {
    "name": "fuzz.instrumentation",
    "version": "1.0",
    "attributes": [_kv("scope.flavour", _string("plain"))],
}
_EVENT = {
    "name": "gen_ai.choice",
    "timeUnixNano": "1776852000300000000",
    "attributes": [_kv("index", {"intValue": "0"})],
}


def base_record(index: int) -> dict[str, Any]:
    """A valid GenAI session in one record: agent span, chat span with a tool call, tool span.

    Ids and the conversation id depend on ``index`` so that every mutant is its own trace
    and session.
    """
    trace = f"{index + 1:032x}"
    agent, chat, tool = (f"{index + 1:012x}{n:04x}" for n in (1, 2, 3))
    conversation = _kv("gen_ai.conversation.id", _string(f"fuzz-{index}"))
    operation = "gen_ai.operation.name"
    chat_attributes = _chat_attributes(conversation)
    tool_attributes = _tool_attributes()
    spans = [
        _span(
            trace,
            agent,
            None,
            "invoke_agent weather_agent",
            ms=(0, 900),
            attributes=[
                _kv(operation, _string("invoke_agent")),
                _kv("gen_ai.agent.name", _string("weather_agent")),
                conversation,
            ],
            status={"code": 1},
        ),
        _span(
            trace,
            chat,
            agent,
            "chat gpt-4o",
            ms=(1, 400),
            kind=3,
            attributes=chat_attributes,
            events=[_EVENT],
            links=[{"traceId": trace, "spanId": agent}],
            status={"code": 0, "message": ""},
        ),
        _span(
            trace,
            tool,
            agent,
            "execute_tool get_weather",
            ms=(401, 450),
            attributes=tool_attributes,
        ),
    ]
    return {
        "resourceSpans": [
            {"resource": _RESOURCE, "scopeSpans": [{"scope": _SCOPE, "spans": spans}]}
        ]
    }


def _json_type(value: Any) -> str:
    """The JSON type of a decoded value (``bool`` is checked before ``int``: it is one)."""
    if isinstance(value, bool) or value is None:
        return {True: "bool", False: "bool", None: "null"}[value]
    for kind, name in ((str, "string"), (list, "list"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return "number"


def _walk(node: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every node under the document root (the root itself excluded), depth first."""
    if path:
        yield path, node
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _walk(child, (*path, key))
    elif isinstance(node, list):
        for position, child in enumerate(node):
            yield from _walk(child, (*path, position))


def mutations() -> list[tuple[Path_, Any]]:
    """(path, replacement) for every node and every JSON type it is not (and ``"mutant"``
    for strings: a wrong string is as likely as a wrong type)."""
    out = []
    for path, value in _walk(base_record(0)):
        for replacement in REPLACEMENTS:
            if _json_type(replacement) != _json_type(value) or isinstance(value, str):
                out.append((path, replacement))
    return out


def accepted_by_proto3_json(path: Path_, replacement: Any) -> bool:
    """Whether a proto3-JSON parser takes this mutant as a valid record.

    ``null`` means "default" for any field, but not for a list element nor for a required
    id; an ``int64`` or an enum may be a JSON number; a string field takes any string.
    """
    field = path[-1]
    if isinstance(field, int):
        return False  # a list element of another type, or null
    if field in _REQUIRED_ID:
        return False
    kind = _json_type(replacement)
    if kind == "null":
        return True
    if field in _OPTIONAL_ID:
        return False
    if field in _INT64 | _ENUM | _NUMBER:
        return kind == "number"
    if field in _BOOL:
        return False
    if field in {"name", "key", "stringValue", "message", "version"}:
        return kind == "string"
    return False  # an object or a list replaced by another type


def apply(record: dict[str, Any], path: Path_, replacement: Any) -> dict[str, Any]:
    mutant = copy.deepcopy(record)
    node: Any = mutant
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = copy.deepcopy(replacement)
    return mutant


def write_mutants(path: Path) -> list[tuple[Path_, Any]]:
    """One mutant per line, line ``n`` built from ``base_record(n)``; line 1 is unmutated."""
    cases = mutations()
    with path.open("w") as out:
        out.write(json.dumps(base_record(0)) + "\n")
        for number, (where, replacement) in enumerate(cases, start=1):
            out.write(json.dumps(apply(base_record(number), where, replacement)) + "\n")
    return cases


def _label(where: Path_, replacement: Any) -> str:
    return ".".join(map(str, where)) + " = " + json.dumps(replacement)


def test_no_mutant_aborts_and_every_bad_one_is_named(tmp_path: Path) -> None:
    source = tmp_path / "mutants.otlp.jsonl"
    cases = write_mutants(source)
    assert len(cases) > 500
    code, report, err = run_audit(str(source))
    assert code in (0, 1), err
    issues = report["issues"] + [i for s in report["sessions"] for i in s["issues"]]
    named: dict[int, list[dict[str, Any]]] = {}
    for issue in issues:
        assert issue["kind"] != "evaluation_error", issue
        if issue["source"] == str(source) and issue["line"] is not None:
            named.setdefault(issue["line"], []).append(issue)
    traces = {t for s in report["sessions"] for t in s["trace_ids"]}
    assert f"{1:032x}" in traces and 1 not in named  # the unmutated record
    unnamed, dropped = [], []
    for line, (where, replacement) in enumerate(cases, start=2):
        index = line - 1
        if accepted_by_proto3_json(where, replacement):
            skipped = sum(i["spans_skipped"] for i in named.get(line, []))
            empties = where[-1] in _HOLDS_SPANS  # `"spans": null` is a record of no spans
            if skipped or (f"{index + 1:032x}" not in traces and not empties):
                dropped.append(_label(where, replacement))
        elif line not in named:
            unnamed.append(_label(where, replacement))
    assert not unnamed, f"{len(unnamed)} bad records not reported: {unnamed[:10]}"
    assert not dropped, f"{len(dropped)} valid records lost spans: {dropped[:10]}"


# Valid OTLP all the same: every attribute of the base record given each other AnyValue.
ANY_VALUES: tuple[dict[str, Any], ...] = (
    {"stringValue": "mutant"},
    {"stringValue": '{"a": [1, {"b": null}]}'},
    {"intValue": "7"},
    {"doubleValue": 1.5},
    {"boolValue": True},
    {"arrayValue": {"values": [{"stringValue": "x"}]}},
    {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": "1"}}]}},
    {"bytesValue": "AAE="},
    {},
)


def test_no_attribute_value_of_another_kind_aborts_the_audit(tmp_path: Path) -> None:
    """Decoding accepts these; turn building must not raise on them (the decoder refuses,
    with an issue, the few kinds that would make it raise), and none is lost silently."""
    attributes = [p for p, _ in _walk(base_record(0)) if p[-1] == "value" and "attributes" in p]
    cases = [(where, value) for where in attributes for value in ANY_VALUES]
    source = tmp_path / "kinds.otlp.jsonl"
    with source.open("w") as out:
        for number, (where, value) in enumerate(cases, start=1):
            out.write(json.dumps(apply(base_record(number), where, value)) + "\n")
    code, report, err = run_audit(str(source))
    assert code in (0, 1), err
    issues = report["issues"] + [i for s in report["sessions"] for i in s["issues"]]
    assert not [i for i in issues if i["kind"] == "evaluation_error"]
    named = {i["line"] for i in issues if i["source"] == str(source)}
    traces = {t for s in report["sessions"] for t in s["trace_ids"]}
    lost = [
        _label(where, value)
        for line, (where, value) in enumerate(cases, start=1)
        if f"{line + 1:032x}" not in traces and line not in named
    ]
    assert not lost, lost[:10]
