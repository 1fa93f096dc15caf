"""Decode OTLP trace data — protobuf messages or OTLP/JSON documents — into SpanRecords.

Two traps drive this module (see docs/architecture.md):

* OTLP/JSON ids are **hex**, not the base64 that proto3-JSON uses for ``bytes``;
  ``google.protobuf.json_format`` would silently read a 32-hex trace id as 24 bytes.
  So JSON is walked by hand and ids are validated here, once.
* ``AnyValue`` may be structured (``kvlistValue``, ``arrayValue``) or a JSON string;
  both decode to plain Python values.

A bad span never spoils its neighbours: it becomes an :class:`InputIssue` naming the
record, and decoding carries on with the rest of the request.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from aem.foundation.model import InputIssue, SourceRef, SpanEvent, SpanRecord

_HEX = frozenset("0123456789abcdefABCDEF")

# Attribute values above this size are truncated (and reported): a 5 MB prompt must not
# cost 5 MB per copy through the whole pipeline.
DEFAULT_MAX_ATTRIBUTE_BYTES = 1_000_000


class DecodeError(ValueError):
    """A record that cannot be decoded at all (not JSON, not OTLP)."""


class Base64IdError(DecodeError):
    """Ids written as base64 (protobuf's JSON mapping for ``bytes``) instead of hex."""


def _is_base64_of(value: str, size: int) -> bool:
    """``value`` is the standard base64 of exactly ``size`` bytes."""
    try:
        return len(base64.b64decode(value, validate=True)) == size
    except (binascii.Error, ValueError):
        return False


def _hex_id(value: Any, length: int, what: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{what} must be a hex string, got {type(value).__name__}")
    if len(value) != length or not _HEX.issuperset(value):
        if _is_base64_of(value, length // 2):
            raise Base64IdError(
                f"{what} {value!r} is base64, not hex: protobuf's MessageToJson writes ids "
                "as base64, OTLP/JSON needs them as hex. Record with "
                "aem_record.OtlpJsonFileExporter (or the Collector's file "
                "exporter), or convert each id with base64.b64decode(id).hex()"
            )
        raise DecodeError(f"{what} {value!r} is not {length} hex characters")
    if value == "0" * length:
        raise DecodeError(f"{what} is all zeros (invalid per OTLP)")
    return value.lower()


class _Field:
    """Checks one OTLP/JSON field against the proto3-JSON mapping and names it on failure.

    proto3 JSON reads ``null`` as "the default" for any field; an ``int64`` may be a JSON
    number or a decimal string; an enum a number or its name. Anything else is refused
    with the field's path, so a wrong-typed record becomes an issue here instead of an
    exception somewhere in turn building.
    """

    @staticmethod
    def fail(where: str, what: str, value: Any) -> DecodeError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
        return DecodeError(f"{where}: expected {what}, got {_json_type(value)} {shown}")

    @classmethod
    def obj(cls, value: Any, where: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise cls.fail(where, "an object", value)
        return value

    @classmethod
    def items(cls, value: Any, where: str) -> list[Mapping[str, Any]]:
        """A repeated message field: a list (or null) of objects."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise cls.fail(where, "a list", value)
        for position, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise cls.fail(f"{where}[{position}]", "an object", item)
        return value

    @classmethod
    def text(cls, value: Any, where: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise cls.fail(where, "a string", value)
        return value

    @classmethod
    def int64(cls, value: Any, where: str) -> int:
        if value is None or value == "":
            return 0
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise cls.fail(where, "an integer", value)
        if isinstance(value, float):
            if not value.is_integer():
                raise cls.fail(where, "an integer", value)
            return int(value)
        try:
            return int(value)
        except ValueError:
            raise cls.fail(where, "an integer", value) from None

    @classmethod
    def enum(cls, value: Any, where: str, names: Mapping[str, int]) -> int:
        if isinstance(value, str) and value in names:
            return names[value]
        try:
            return cls.int64(value, where)
        except DecodeError:
            raise cls.fail(where, f"a number or one of {', '.join(names)}", value) from None

    @classmethod
    def double(cls, value: Any, where: str) -> float:
        if value is None:
            return 0.0
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise cls.fail(where, "a number", value)
        try:
            return float(value)
        except ValueError:
            raise cls.fail(where, "a number", value) from None

    @classmethod
    def boolean(cls, value: Any, where: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise cls.fail(where, "true or false", value)
        return value


# JSON type names as an error message says them; bool before number (bool is an int).
_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"),
    (bool, "bool"),
    ((int, float), "number"),
    (str, "string"),
    (list, "list"),
    (Mapping, "object"),
)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "value")


_SPAN_KINDS = {
    f"SPAN_KIND_{name}": number
    for number, name in enumerate(
        ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
    )
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
# Deeper ``arrayValue``/``kvlistValue`` nesting is refused: protobuf stops at 100 levels
# too, and unbounded recursion here would end the run with a RecursionError.
_MAX_VALUE_DEPTH = 100


def json_any_value(value: Any, where: str = "value", depth: int = 0) -> Any:
    """Decode an OTLP/JSON ``AnyValue`` object into a plain Python value.

    Raises :class:`DecodeError` naming ``where`` when the value is not a valid
    ``AnyValue`` (e.g. ``{"intValue": "abc"}``).
    """
    if depth > _MAX_VALUE_DEPTH:
        raise DecodeError(f"{where}: nested deeper than {_MAX_VALUE_DEPTH} levels")
    value = _Field.obj(value, where)
    if "stringValue" in value:
        return _Field.text(value["stringValue"], f"{where}.stringValue")
    if "intValue" in value:
        return _Field.int64(value["intValue"], f"{where}.intValue")
    if "doubleValue" in value:
        return _Field.double(value["doubleValue"], f"{where}.doubleValue")
    if "boolValue" in value:
        return _Field.boolean(value["boolValue"], f"{where}.boolValue")
    if "arrayValue" in value:
        here = f"{where}.arrayValue.values"
        array = _Field.obj(value["arrayValue"], f"{where}.arrayValue").get("values")
        return [
            json_any_value(v, f"{here}[{i}]", depth + 1)
            for i, v in enumerate(_Field.items(array, here))
        ]
    if "kvlistValue" in value:
        here = f"{where}.kvlistValue"
        kvlist = _Field.obj(value["kvlistValue"], here).get("values")
        return json_attributes(kvlist, f"{here}.values", depth + 1)
    if "bytesValue" in value:
        return _bytes(value["bytesValue"], f"{where}.bytesValue")
    return None


def _bytes(value: Any, where: str) -> bytes:
    """Standard or URL-safe base64, padded or not (proto3 JSON accepts all four)."""
    text = _Field.text(value, where).replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _Field.fail(where, "base64", value) from None


def json_attributes(items: Any, where: str = "attributes", depth: int = 0) -> dict[str, Any]:
    """Decode a list of OTLP/JSON ``KeyValue`` (a key must be a string: an integer key
    is refused here, or it would fail evaluation later)."""
    out: dict[str, Any] = {}
    for position, kv in enumerate(_Field.items(items, where)):
        here = f"{where}[{position}]"
        key = _Field.text(kv.get("key"), f"{here}.key")
        out[key] = json_any_value(kv.get("value"), f"{here}.value", depth)
    return out


def proto_any_value(value: AnyValue) -> Any:
    """Decode a protobuf ``AnyValue`` into a plain Python value."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [proto_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: proto_any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which)


def proto_attributes(items: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: proto_any_value(kv.value) for kv in items}


def _truncate_attributes(
    attributes: dict[str, Any], limit: int, span: SpanRecord, issues: list[InputIssue]
) -> None:
    for key, value in attributes.items():
        if isinstance(value, str | bytes) and len(value) > limit:
            attributes[key] = value[:limit]
            issues.append(
                InputIssue.at_span(
                    "attribute_truncated",
                    f"attribute {key!r} of span {span.span_id} is {len(value):,} bytes; "
                    f"kept the first {limit:,}",
                    span,
                )
            )


# Names and ids the semantic conventions define as strings and turn building keys on: a
# number is read as its text (and reported); a list, a map or bytes refuse the span, or
# it would make the session's evaluation raise later.
_STRING_ATTRIBUTES = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.agent.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "openinference.span.kind",
        "llm.model_name",
        "tool.name",
        "tool.id",
        "tool_call.id",
        "traceloop.span.kind",
        "traceloop.entity.name",
        "llm.request.model",
        "llm.request.type",
        "ai.model.id",
    }
)


def _string_conventions(attributes: dict[str, Any], where: str) -> list[str]:
    """Coerce the scalar values of :data:`_STRING_ATTRIBUTES` to text; return their keys."""
    coerced = []
    for key in _STRING_ATTRIBUTES.intersection(attributes):
        value = attributes[key]
        if value is None or isinstance(value, str):
            continue
        if not isinstance(value, bool | int | float):
            raise _Field.fail(f"{where} {key!r}", "a string (semantic conventions)", value)
        attributes[key] = str(value).lower() if isinstance(value, bool) else str(value)
        coerced.append(key)
    return coerced


def _accept(span: SpanRecord, max_attribute_bytes: int, issues: list[InputIssue]) -> bool:
    """The checks that need a whole span; ``False`` (with an issue) when it is refused."""
    try:
        coerced = _string_conventions(span.attributes, "attribute")
        coerced += _string_conventions(span.resource, "resource attribute")
    except DecodeError as exc:
        issues.append(
            _issue(
                "bad_span",
                f"span skipped: {exc}",
                span.origin,
                span_id=span.span_id,
                trace_id=span.trace_id,
                spans_skipped=1,
            )
        )
        return False
    if coerced:
        message = (
            f"{', '.join(sorted(coerced))} of span {span.span_id} should be text; read as text"
        )
        issues.append(
            _issue(
                "attribute_type", message, span.origin, span_id=span.span_id, trace_id=span.trace_id
            )
        )
    _truncate_attributes(span.attributes, max_attribute_bytes, span, issues)
    return True


def _issue(kind: str, message: str, origin: SourceRef | None, **extra: Any) -> InputIssue:
    return InputIssue.at_origin(kind, message, origin, **extra)


def decode_json_traces(
    document: Mapping[str, Any],
    origin: SourceRef | None = None,
    *,
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES,
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Decode one OTLP/JSON ``TracesData`` / ``ExportTraceServiceRequest`` document.

    Every field is checked against the proto3-JSON mapping: a bad span is skipped, a bad
    resource or scope skips the spans under it, each with an issue naming the field.

    >>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{
    ...     "traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174",
    ...     "name": "chat", "attributes": [{"key": "n", "value": {"intValue": "3"}}]}]}]}]}
    >>> spans, issues = decode_json_traces(doc)
    >>> spans[0].trace_id, spans[0].attributes["n"], issues
    ('5b8efff798038103d269b633813fc60c', 3, [])
    """
    if not isinstance(document, Mapping):
        raise DecodeError("not an OTLP trace document (not a JSON object)")
    try:
        groups = _Field.items(document.get("resourceSpans"), "resourceSpans")
    except DecodeError as exc:
        raise DecodeError(f"not an OTLP trace document: {exc}") from None
    spans: list[SpanRecord] = []
    issues: list[InputIssue] = []
    for position, resource_spans in enumerate(groups):
        where = f"resourceSpans[{position}]"
        try:
            resource = json_attributes(
                _Field.obj(resource_spans.get("resource"), f"{where}.resource").get("attributes"),
                f"{where}.resource.attributes",
            )
            scope_groups = _Field.items(resource_spans.get("scopeSpans"), f"{where}.scopeSpans")
        except DecodeError as exc:
            issues.append(_group_issue("bad_resource", exc, resource_spans, origin))
            continue
        for index, scope_spans in enumerate(scope_groups):
            where_scope = f"{where}.scopeSpans[{index}]"
            for span in _decode_scope_spans(scope_spans, where_scope, resource, origin, issues):
                if _accept(span, max_attribute_bytes, issues):
                    spans.append(span)
    return spans, issues


def _decode_scope_spans(
    scope_spans: Mapping[str, Any],
    where: str,
    resource: dict[str, Any],
    origin: SourceRef | None,
    issues: list[InputIssue],
) -> Iterator[SpanRecord]:
    """The valid spans of one ``scopeSpans``; every bad one is added to ``issues``."""
    try:
        scope = _Field.obj(scope_spans.get("scope"), f"{where}.scope")
        scope_name = _Field.text(scope.get("name"), f"{where}.scope.name")
        _Field.text(scope.get("version"), f"{where}.scope.version")
        json_attributes(scope.get("attributes"), f"{where}.scope.attributes")
        raws = _Field.items(scope_spans.get("spans"), f"{where}.spans")
    except DecodeError as exc:
        issues.append(_group_issue("bad_scope", exc, scope_spans, origin))
        return
    for index, raw in enumerate(raws):
        try:
            yield _json_span(raw, resource, scope_name, origin)
        except DecodeError as exc:
            span_id = raw.get("spanId")
            issues.append(
                _issue(
                    "base64_ids" if isinstance(exc, Base64IdError) else "bad_span",
                    f"span skipped: {where}.spans[{index}].{exc}",
                    origin,
                    span_id=span_id if isinstance(span_id, str) else None,
                    spans_skipped=1,
                )
            )


def _group_issue(
    kind: str, exc: DecodeError, group: Mapping[str, Any], origin: SourceRef | None
) -> InputIssue:
    """A bad resource or scope: its spans are skipped (counted as far as they can be)."""
    skipped = _count_spans(group)
    return _issue(kind, f"{skipped} span(s) skipped: {exc}", origin, spans_skipped=skipped)


def _count_spans(node: Any) -> int:
    if not isinstance(node, Mapping):
        return 0
    if isinstance(node.get("spans"), list):
        return len(node["spans"])
    groups = node.get("scopeSpans")
    return sum(_count_spans(g) for g in groups) if isinstance(groups, list) else 0


def _json_span(
    raw: Mapping[str, Any], resource: dict[str, Any], scope: str, origin: SourceRef | None
) -> SpanRecord:
    """One span, every field checked; a :class:`DecodeError` names the bad field."""
    parent = raw.get("parentSpanId")
    status = _Field.obj(raw.get("status"), "status")
    _Field.text(raw.get("traceState"), "traceState")
    for counter in ("droppedAttributesCount", "droppedEventsCount", "droppedLinksCount", "flags"):
        _Field.int64(raw.get(counter), counter)
    return SpanRecord(
        trace_id=_hex_id(raw.get("traceId"), 32, "traceId"),
        span_id=_hex_id(raw.get("spanId"), 16, "spanId"),
        parent_span_id=_hex_id(parent, 16, "parentSpanId") if parent not in (None, "") else None,
        name=_Field.text(raw.get("name"), "name"),
        kind=_Field.enum(raw.get("kind"), "kind", _SPAN_KINDS),
        start_unix_nano=_Field.int64(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        end_unix_nano=_Field.int64(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        status_code=_Field.enum(status.get("code"), "status.code", _STATUS_CODES),
        status_message=_Field.text(status.get("message"), "status.message"),
        attributes=json_attributes(raw.get("attributes")),
        events=[_json_event(e, f"events[{i}]") for i, e in enumerate(_items(raw, "events"))],
        resource=resource,
        links=[_json_link(k, f"links[{i}]") for i, k in enumerate(_items(raw, "links"))],
        scope=scope,
        origin=origin,
    )


def _items(raw: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    return _Field.items(raw.get(name), name)


def _json_event(raw: Mapping[str, Any], where: str) -> SpanEvent:
    return SpanEvent(
        name=_Field.text(raw.get("name"), f"{where}.name"),
        time_unix_nano=_Field.int64(raw.get("timeUnixNano"), f"{where}.timeUnixNano"),
        attributes=json_attributes(raw.get("attributes"), f"{where}.attributes"),
    )


def _json_link(raw: Mapping[str, Any], where: str) -> tuple[str, str]:
    _Field.text(raw.get("traceState"), f"{where}.traceState")
    json_attributes(raw.get("attributes"), f"{where}.attributes")
    return (
        _hex_id(raw.get("traceId"), 32, f"{where}.traceId"),
        _hex_id(raw.get("spanId"), 16, f"{where}.spanId"),
    )


def decode_proto_request(
    request: ExportTraceServiceRequest,
    origin: SourceRef | None = None,
    *,
    max_attribute_bytes: int = DEFAULT_MAX_ATTRIBUTE_BYTES,
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Decode a protobuf ``ExportTraceServiceRequest`` (or ``TracesData``)."""
    spans: list[SpanRecord] = []
    issues: list[InputIssue] = []
    for resource_spans in request.resource_spans:
        resource = proto_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for raw in scope_spans.spans:
                try:
                    span = SpanRecord(
                        trace_id=_hex_id(raw.trace_id.hex(), 32, "trace_id"),
                        span_id=_hex_id(raw.span_id.hex(), 16, "span_id"),
                        parent_span_id=(
                            _hex_id(raw.parent_span_id.hex(), 16, "parent_span_id")
                            if raw.parent_span_id
                            else None
                        ),
                        name=raw.name,
                        kind=int(raw.kind),
                        start_unix_nano=raw.start_time_unix_nano,
                        end_unix_nano=raw.end_time_unix_nano,
                        status_code=int(raw.status.code),
                        status_message=raw.status.message,
                        attributes=proto_attributes(raw.attributes),
                        events=[
                            SpanEvent(e.name, e.time_unix_nano, proto_attributes(e.attributes))
                            for e in raw.events
                        ],
                        resource=resource,
                        links=[(lk.trace_id.hex(), lk.span_id.hex()) for lk in raw.links],
                        scope=scope,
                        origin=origin,
                    )
                except DecodeError as exc:
                    issues.append(
                        _issue(
                            "bad_span",
                            f"span skipped: {exc}",
                            origin,
                            span_id=raw.span_id.hex(),
                            spans_skipped=1,
                        )
                    )
                    continue
                if _accept(span, max_attribute_bytes, issues):
                    spans.append(span)
    return spans, issues
