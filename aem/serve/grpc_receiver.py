"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

Push-back is the OTLP way: ``RESOURCE_EXHAUSTED`` with a ``google.rpc.RetryInfo`` in the
``grpc-status-details-bin`` trailer, which the OTel exporters read as "retry after". A
request the server cannot parse is ``INVALID_ARGUMENT`` (not retryable); bad spans in a
good request are counted in ``partial_success``.
"""

from __future__ import annotations

import hmac
import logging
from concurrent import futures

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from aem.model import SourceRef
from aem.serve.intake import Busy, Intake
from aem.serve.ops import ServeMetrics
from aem.serve.settings import ServeSettings
from collectors.otlp import decode_proto_request

log = logging.getLogger("aem.serve.grpc")


def _retry_status(code: int, message: str, retry_after: float) -> grpc.Status:
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(retry_after * 1e9))
    detail = status_pb2.Status(code=code, message=message)
    detail.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return rpc_status.to_status(detail)


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, intake: Intake, metrics: ServeMetrics, token: str | None) -> None:
        self._intake = intake
        self._metrics = metrics
        self._token = token

    def Export(
        self,
        request: trace_service_pb2.ExportTraceServiceRequest,
        context: grpc.ServicerContext,
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        if self._token is not None:
            given = dict(context.invocation_metadata()).get("authorization", "")
            if not hmac.compare_digest(str(given), f"Bearer {self._token}"):
                self._metrics.requests_rejected.labels("grpc", "unauthenticated").inc()
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        origin = SourceRef(f"grpc:{context.peer()}")
        # grpc already parsed the message: garbage bytes never reach this method, grpc
        # answers them itself (INTERNAL "Exception deserializing request").
        spans, issues = decode_proto_request(request, origin)
        try:
            answer = self._intake.accept(spans, issues, "grpc")
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
    server = grpc.server(
        futures.ThreadPoolExecutor(
            max_workers=settings.receiver_workers, thread_name_prefix="grpc"
        ),
        options=[
            ("grpc.max_receive_message_length", settings.max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=settings.receiver_workers * 4,
    )
    token = settings.bearer_token.get_secret_value() if settings.bearer_token else None
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(
        TraceService(intake, metrics, token), server
    )
    address = f"{settings.host}:{settings.grpc_port}"
    if settings.tls_cert_file and settings.tls_key_file:
        credentials = grpc.ssl_server_credentials(
            [(settings.tls_key_file.read_bytes(), settings.tls_cert_file.read_bytes())]
        )
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind gRPC receiver on {address}")
    server.start()
    return server, port
