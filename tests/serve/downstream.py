"""A real OTLP/gRPC downstream for tests: records every trace and log export it accepts.

It can be started on a fixed port, stopped ("down") and started again ("up"), so tests
can watch the serve outbox retry until delivery.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass
class Received:
    """Flattened views of what arrived: one dict per log record and per span."""

    events: list[dict] = field(default_factory=list)
    spans: list[dict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _attrs(kvs) -> dict:
    out = {}
    for kv in kvs:
        which = kv.value.WhichOneof("value")
        if which == "array_value":
            out[kv.key] = [getattr(v, v.WhichOneof("value")) for v in kv.value.array_value.values]
        elif which:
            out[kv.key] = getattr(kv.value, which)
    return out


class _Logs(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, received: Received) -> None:
        self.received = received

    def Export(self, request, context):
        with self.received.lock:
            for rl in request.resource_logs:
                for sl in rl.scope_logs:
                    for rec in sl.log_records:
                        self.received.events.append(
                            {
                                "event_name": rec.event_name,
                                "trace_id": rec.trace_id.hex(),
                                "span_id": rec.span_id.hex(),
                                "attributes": _attrs(rec.attributes),
                                "resource": _attrs(rl.resource.attributes),
                            }
                        )
        return logs_service_pb2.ExportLogsServiceResponse()


class _Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, received: Received) -> None:
        self.received = received

    def Export(self, request, context):
        with self.received.lock:
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        self.received.spans.append(
                            {
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_span_id": span.parent_span_id.hex(),
                                "links": [
                                    (lk.trace_id.hex(), lk.span_id.hex()) for lk in span.links
                                ],
                                "attributes": _attrs(span.attributes),
                                "status_code": span.status.code,
                                "resource": _attrs(rs.resource.attributes),
                            }
                        )
        return trace_service_pb2.ExportTraceServiceResponse()


class Downstream:
    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.received = Received()
        self._server: grpc.Server | None = None

    def start(self) -> Downstream:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_Logs(self.received), server)
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Traces(self.received), server)
        self.port = server.add_insecure_port(f"127.0.0.1:{self.port}")
        server.start()
        self._server = server
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None).wait()
            self._server = None
