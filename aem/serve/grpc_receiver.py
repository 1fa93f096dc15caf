"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

Push-back is the OTLP way: ``RESOURCE_EXHAUSTED`` with a ``google.rpc.RetryInfo`` in the
``grpc-status-details-bin`` trailer, which the OTel exporters read as "retry after" — for
a full queue and for too many concurrent calls alike. A request the server cannot parse is
``INVALID_ARGUMENT`` (not retryable); bad spans in a good request are counted in
``partial_success``.

Why a generic handler instead of the generated servicer: the generated one parses the
message before any code of ours runs, so an unauthenticated client could make the server
receive and parse up to ``max_request_bytes`` per call. Here :meth:`ExportHandler.service`
runs on gRPC's own thread as the call arrives: it checks the bearer token from the
metadata and the concurrency gate, and refuses before a byte of the message is read. The
method is registered request-streaming (the wire format of a unary call is the same) so
the handler decides when to read the one message, and reads it as raw bytes, parsed only
after the checks.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from aem.serve.intake import BadRequest, Busy, Intake, TooLarge
from aem.serve.ops import ServeMetrics
from aem.serve.settings import ServeSettings, UnusableSetting, host_port

log = logging.getLogger("aem.serve.grpc")

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
# Calls admitted at once = receiver_workers x this; beyond it RESOURCE_EXHAUSTED + RetryInfo.
GATE_PER_WORKER = 4
# gRPC's own limit (no RetryInfo) stays far above the gate, only as a last resort.
BACKSTOP_PER_WORKER = 16
# Threads beyond the gate, so refusals are answered at once even when every admitted call
# is busy.
SPARE_THREADS = 4


def _retry_status(code: int, message: str, retry_after: float) -> grpc.Status:
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(retry_after * 1e9))
    detail = status_pb2.Status(code=code, message=message)
    detail.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return rpc_status.to_status(detail)


def _serialize(response: trace_service_pb2.ExportTraceServiceResponse) -> bytes:
    return response.SerializeToString()


class ExportHandler(grpc.GenericRpcHandler):  # type: ignore[misc]  # grpc ships no types
    def __init__(
        self,
        intake: Intake,
        metrics: ServeMetrics,
        token: str | None,
        *,
        gate: int,
        retry_after: float,
    ) -> None:
        self._intake = intake
        self._metrics = metrics
        self._token = f"Bearer {token}".encode() if token is not None else None
        self._gate = gate
        self._retry_after = retry_after
        self._active = 0
        self._lock = threading.Lock()

    # ---- on gRPC's serving thread, before the message is read ------------------------
    def service(self, handler_call_details: Any) -> grpc.RpcMethodHandler | None:
        if handler_call_details.method != EXPORT:
            return None
        if self._token is not None:
            given = dict(handler_call_details.invocation_metadata).get("authorization", "")
            if not hmac.compare_digest(str(given).encode(), self._token):
                self._metrics.requests_rejected.labels("grpc", "unauthenticated").inc()
                return self._refusal(grpc.StatusCode.UNAUTHENTICATED)
        with self._lock:
            admitted = self._active < self._gate
            if admitted:
                self._active += 1
        if not admitted:
            self._metrics.requests_rejected.labels("grpc", "too_many_requests").inc()
            return self._refusal(None)
        return grpc.stream_unary_rpc_method_handler(
            self._export, request_deserializer=None, response_serializer=_serialize
        )

    def _refusal(self, code: grpc.StatusCode | None) -> grpc.RpcMethodHandler:
        """A handler that answers without reading the request."""
        retry_after = self._retry_after

        def refuse(_requests: Iterator[bytes], context: grpc.ServicerContext) -> None:
            if code is not None:
                context.abort(code, "missing or wrong bearer token")
            context.abort_with_status(
                _retry_status(
                    code_pb2.RESOURCE_EXHAUSTED,
                    "too many concurrent export calls; retry later",
                    retry_after,
                )
            )

        return grpc.stream_unary_rpc_method_handler(refuse, response_serializer=_serialize)

    # ---- on a worker thread -------------------------------------------------------------
    def _export(
        self, requests: Iterator[bytes], context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        try:
            body = next(requests, None)
            if body is None:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no request message")
                raise AssertionError("abort raises")
            return self._accept(body, context)
        finally:
            with self._lock:
                self._active -= 1

    def _accept(
        self, body: bytes, context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        origin = f"grpc:{context.peer()}"
        try:
            answer = self._intake.receive_protobuf(body, "grpc", origin)
            del body
        except TooLarge as exc:
            self._metrics.requests_rejected.labels("grpc", "too_large").inc()
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except BadRequest as exc:
            self._metrics.requests_rejected.labels("grpc", "bad_request").inc()
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except Busy as exc:
            code = code_pb2.UNAVAILABLE if exc.unavailable else code_pb2.RESOURCE_EXHAUSTED
            context.abort_with_status(_retry_status(code, str(exc), exc.retry_after))
        response = trace_service_pb2.ExportTraceServiceResponse()
        if answer.rejected_spans or answer.error_message:
            response.partial_success.rejected_spans = answer.rejected_spans
            response.partial_success.error_message = answer.error_message
        return response


def start_grpc(
    settings: ServeSettings, intake: Intake, metrics: ServeMetrics
) -> tuple[grpc.Server, int]:
    """Start the gRPC server; returns it and the port it bound."""
    gate = settings.receiver_workers * GATE_PER_WORKER
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=gate + SPARE_THREADS, thread_name_prefix="grpc"),
        options=[
            ("grpc.max_receive_message_length", settings.max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=settings.receiver_workers * BACKSTOP_PER_WORKER,
    )
    token = settings.bearer_token.get_secret_value() if settings.bearer_token else None
    server.add_generic_rpc_handlers(
        (
            ExportHandler(
                intake, metrics, token, gate=gate, retry_after=settings.retry_after_seconds
            ),
        )
    )
    address = host_port(settings.host, settings.grpc_port)
    try:
        port = _bind(server, settings, address)
    except (OSError, RuntimeError) as exc:  # grpc says RuntimeError("Failed to bind ...")
        raise UnusableSetting("grpc_port", f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise UnusableSetting("grpc_port", f"cannot listen on {address}")
    server.start()
    return server, port


def _bind(server: grpc.Server, settings: ServeSettings, address: str) -> int:
    """Listen on ``address`` (with TLS when configured); the port bound, 0 on failure."""
    if settings.tls_cert_file and settings.tls_key_file:
        try:
            pair = (settings.tls_key_file.read_bytes(), settings.tls_cert_file.read_bytes())
        except OSError as exc:
            raise UnusableSetting(
                "tls_cert_file", f"cannot read the key or certificate: {exc}"
            ) from exc
        return int(server.add_secure_port(address, grpc.ssl_server_credentials([pair])))
    return int(server.add_insecure_port(address))
