"""A separate-process OTLP client: re-sends OTLP/JSON sample lines through the real
``OTLPSpanExporter`` (gRPC or HTTP) and prints what it exported as JSON.

Run as ``python tests/serve/sender.py --protocol grpc --endpoint 127.0.0.1:4317 FILES``.
Each input line becomes one ``export()`` call (the exporter's own retry handles
RESOURCE_EXHAUSTED / 429 with the server's retry hint); the process exits non-zero if an
export finally failed, so a test can tell "sent" from "given up".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.status import Status, StatusCode

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from aem.foundation.model import SpanRecord
from collectors.otlp import decode_json_traces


def _ctx(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), False, TraceFlags(TraceFlags.SAMPLED))


def to_readable(span: SpanRecord) -> ReadableSpan:
    """A decoded span back as the SDK's span, so the real exporter encodes it."""
    return ReadableSpan(
        name=span.name,
        context=_ctx(span.trace_id, span.span_id),
        parent=_ctx(span.trace_id, span.parent_span_id) if span.parent_span_id else None,
        resource=Resource(span.resource),
        attributes=span.attributes,
        events=[Event(e.name, e.attributes, e.time_unix_nano) for e in span.events],
        links=[Link(_ctx(t, s)) for t, s in span.links],
        kind=SpanKind(max(span.kind - 1, 0)),
        status=Status(StatusCode(span.status_code), span.status_message or None)
        if span.status_code == 2
        else Status(StatusCode(span.status_code)),
        start_time=span.start_unix_nano,
        end_time=span.end_unix_nano,
        instrumentation_scope=InstrumentationScope(span.scope or "unknown"),
    )


def read_lines(paths: list[str]) -> list[list[ReadableSpan]]:
    batches = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                spans, _ = decode_json_traces(json.loads(line))
                batches.append([to_readable(s) for s in spans])
    return batches


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", choices=["grpc", "http"], default="grpc")
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--token", default=None)
    parser.add_argument("--ca-file", default=None, help="PEM CA: speak TLS, trust this CA")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=1, help="send the files this many times")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    headers = {"authorization": f"Bearer {args.token}"} if args.token else None
    exporter: object
    if args.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        credentials = None
        if args.ca_file:
            import grpc

            credentials = grpc.ssl_channel_credentials(Path(args.ca_file).read_bytes())
        exporter = OTLPSpanExporter(
            endpoint=args.endpoint,
            insecure=credentials is None,
            credentials=credentials,
            headers=headers,
            timeout=args.timeout,
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        if args.ca_file:
            # requests lets these override the session's CA, i.e. the exporter's
            # certificate_file (psf/requests#3829): the CA asked for must win.
            os.environ.pop("REQUESTS_CA_BUNDLE", None)
            os.environ.pop("CURL_CA_BUNDLE", None)
        exporter = HttpExporter(
            endpoint=args.endpoint,
            certificate_file=args.ca_file,
            headers=headers,
            timeout=args.timeout,
        )
    batches = read_lines(args.files)
    exported = failed = 0
    for _ in range(args.repeat):
        for batch in batches:
            if exporter.export(batch) is SpanExportResult.SUCCESS:  # type: ignore[attr-defined]
                exported += len(batch)
            else:
                failed += len(batch)
    exporter.shutdown()  # type: ignore[attr-defined]
    print(json.dumps({"exported": exported, "failed": failed}))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
