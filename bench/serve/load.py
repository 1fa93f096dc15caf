"""An open-loop OTLP load generator: pre-encoded requests at a target rate, many in flight.

Why open loop: a sender that waits for each answer before the next request measures its
own round trip, not the server. Here each sender process has ``in_flight`` worker threads
that share one gRPC channel (so many calls are in flight on one channel) or hold one
kept-alive HTTP connection each; request *i* is due at ``start + i / rate`` whatever the
answers so far (``rate`` 0: as fast as the workers can send). A worker that finds its
request already due sends at once; how far the generator fell behind its schedule is
reported, so a run where the load itself was the limit shows it.

Push-back (``RESOURCE_EXHAUSTED`` with RetryInfo, 429/503 with Retry-After) is honoured
— the worker waits the hint and resends the same request — and counted. Anything else is
counted as dropped. The ack latency of a request is the time from its accepted attempt's
send to the server's answer.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


@dataclass
class SenderResult:
    accepted_requests: int = 0
    accepted_spans: int = 0
    pushed_back: int = 0
    dropped: int = 0
    ack_seconds: list[float] = field(default_factory=list)
    max_behind_seconds: float = 0.0
    first_send: float = float("inf")
    last_ack: float = 0.0


class _Grpc:
    def __init__(self, target: str) -> None:
        import grpc

        self._grpc = grpc
        self._channel = grpc.insecure_channel(target)
        self._export = self._channel.unary_unary(METHOD)

    def connection(self) -> Any:
        return self._export

    def send(self, export: Any, body: bytes) -> float | None:
        """None when accepted, else the retry delay (push-back); raises when dropped."""
        grpc = self._grpc
        try:
            export(body, timeout=60)
            return None
        except grpc.RpcError as exc:
            if exc.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            from google.rpc import error_details_pb2
            from grpc_status import rpc_status

            status = rpc_status.from_call(exc)
            info = error_details_pb2.RetryInfo()
            if status is not None and status.details and status.details[0].Unpack(info):
                return float(info.retry_delay.ToNanoseconds() / 1e9)
            return 0.05

    def close(self) -> None:
        self._channel.close()


class _Http:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._path = parts.path or "/v1/traces"

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self._host, self._port, timeout=60)

    def send(self, conn: http.client.HTTPConnection, body: bytes) -> float | None:
        conn.request("POST", self._path, body, {"Content-Type": "application/x-protobuf"})
        response = conn.getresponse()
        response.read()
        if response.status == 200:
            return None
        if response.status in (429, 503):
            return float(response.getheader("Retry-After") or 1)
        raise RuntimeError(f"HTTP {response.status}")

    def close(self) -> None:
        pass


def run_sender(
    transport: str,
    target: str,
    requests: list[tuple[bytes, int]],
    *,
    rate: float,
    in_flight: int,
    start_at: float,
) -> SenderResult:
    """Send ``(body, spans)`` requests open-loop from ``in_flight`` threads; ``rate`` is
    requests/s for this sender (0: as fast as possible). ``start_at`` is a
    ``time.time()`` shared by every sender process, so they start together."""
    client: _Grpc | _Http = _Grpc(target) if transport == "grpc" else _Http(target)
    result = SenderResult()
    lock = threading.Lock()
    next_index = iter(range(len(requests)))

    def worker() -> None:
        conn = client.connection()
        while True:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            body, spans = requests[i]
            if rate:
                behind = time.time() - (start_at + i / rate)
                if behind < 0:
                    time.sleep(-behind)
                with lock:
                    result.max_behind_seconds = max(result.max_behind_seconds, behind)
            _deliver(client, conn, body, spans, result, lock)

    while time.time() < start_at:
        time.sleep(min(0.01, max(0.0, start_at - time.time())))
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(in_flight)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    return result


def _deliver(
    client: _Grpc | _Http, conn: Any, body: bytes, spans: int, result: SenderResult, lock: Any
) -> None:
    while True:
        sent = time.time()
        try:
            delay = client.send(conn, body)
        except Exception:
            with lock:
                result.dropped += 1
            return
        acked = time.time()
        with lock:
            result.first_send = min(result.first_send, sent)
            if delay is None:
                result.accepted_requests += 1
                result.accepted_spans += spans
                result.ack_seconds.append(acked - sent)
                result.last_ack = max(result.last_ack, acked)
                return
            result.pushed_back += 1
        time.sleep(delay)
