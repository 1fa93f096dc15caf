"""A real HTTP server that plays a downstream (OTLP/HTTP ``/v1/traces`` and ``/v1/logs``,
Phoenix ``/v1/span_annotations``) and can turn hostile while the test runs.

Modes: ``endless`` answers 200 and then writes body bytes as fast as the socket takes
them, for as long as the client reads; ``drip`` answers 200 with a ``Content-Length`` and
writes one byte every ``DRIP_PACE`` seconds; ``ok`` answers as the real downstream would
and records what it was sent (the OTLP spans' ``aem.session.id``, Phoenix's annotations).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

DRIP_PACE = 0.3
ENDLESS_SECONDS = 60.0
CHUNK = b"x" * 65536


class HostileSink(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str = "ok") -> None:
        super().__init__(("127.0.0.1", 0), SinkHandler)
        self.mode = mode
        self.lock = threading.Lock()
        self.requests: dict[str, int] = {}  # mode → requests answered in it
        self.bytes_sent = 0  # hostile body bytes written
        self.otlp_sessions: set[str] = set()
        self.phoenix_sessions: set[str] = set()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class SinkHandler(BaseHTTPRequestHandler):
    server: HostileSink
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = self.server.mode
        with self.server.lock:
            self.server.requests[mode] = self.server.requests.get(mode, 0) + 1
        try:
            if mode == "endless":
                self._endless()
            elif mode == "drip":
                self._drip()
            else:
                self._ok(body)
        except OSError:
            pass  # the client hung up: what a bounded client does

    def _endless(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(10**12))
        self.end_headers()
        until = time.monotonic() + ENDLESS_SECONDS
        while time.monotonic() < until:
            self.wfile.write(CHUNK)
            with self.server.lock:
                self.server.bytes_sent += len(CHUNK)

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        for _ in range(100000):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(DRIP_PACE)

    def _ok(self, body: bytes) -> None:
        if self.path.startswith("/v1/span_annotations"):
            data = json.loads(body)["data"]
            with self.server.lock:
                self.server.phoenix_sessions.update(a["metadata"]["session_id"] for a in data)
            self._reply(b'{"data": []}', "application/json")
            return
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            sessions = {
                kv.value.string_value
                for rs in request.resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
                for kv in span.attributes
                if kv.key == "aem.session.id"
            }
            with self.server.lock:
                self.server.otlp_sessions.update(sessions)
        self._reply(b"", "application/x-protobuf")

    def _reply(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
