"""The envelope of an OTLP trace request: its resources and scopes, each span left as bytes.

Why: with evaluation paused the receiver spools a request as it came and must only know
that it is an ``ExportTraceServiceRequest`` on the wire and how many spans it carries.
Parsing the full message builds every span's attributes (most of the parse); this
message type has the same field numbers, but ``ScopeSpans.spans``, the resource and the
scope are ``bytes``, so protobuf's C parser (upb) checks the framing of the whole body
and skips over each span by its length. What a span holds is checked when the request
is decoded, after the acknowledgement (:mod:`aem.serve.rawrequests`).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "aem.serve.envelope"


def _message(file: descriptor_pb2.FileDescriptorProto, name: str, fields: list[Any]) -> None:
    message = file.message_type.add(name=name)
    for field_name, number, kind, label, type_name in fields:
        field = message.field.add(name=field_name, number=number, type=kind, label=label)
        if type_name:
            field.type_name = f".{_PACKAGE}.{type_name}"


def _envelope_class() -> Any:
    file = descriptor_pb2.FileDescriptorProto(
        name="aem_serve_envelope.proto", package=_PACKAGE, syntax="proto3"
    )
    many, one = _F.LABEL_REPEATED, _F.LABEL_OPTIONAL
    # Field numbers of opentelemetry/proto/{collector/,}trace/v1/*.proto.
    _message(file, "Request", [("resource_spans", 1, _F.TYPE_MESSAGE, many, "ResourceSpans")])
    _message(
        file,
        "ResourceSpans",
        [
            ("resource", 1, _F.TYPE_BYTES, one, None),
            ("scope_spans", 2, _F.TYPE_MESSAGE, many, "ScopeSpans"),
            ("schema_url", 3, _F.TYPE_BYTES, one, None),
        ],
    )
    _message(
        file,
        "ScopeSpans",
        [
            ("scope", 1, _F.TYPE_BYTES, one, None),
            ("spans", 2, _F.TYPE_BYTES, many, None),
            ("schema_url", 3, _F.TYPE_BYTES, one, None),
        ],
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Request"))


Envelope = _envelope_class()


def parse_envelope(body: bytes) -> Any:
    """The request's envelope; raises ``google.protobuf.message.DecodeError`` when the
    body is not a protobuf of that shape."""
    envelope = Envelope()
    envelope.ParseFromString(body)
    return envelope


def count_spans(envelope: Any) -> int:
    return sum(len(ss.spans) for rs in envelope.resource_spans for ss in rs.scope_spans)
