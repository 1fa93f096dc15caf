"""``aem serve`` beside a real backend: the OTLP sink sends spans only, logs only or both
(``serve.sinks.otlp.signals``), and the spool defaults to the per-user data directory."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from aem.serve.settings import ServeSettings
from aem.sinks.otlp import OtlpSink
from aem.sinks.records import OutboxItem

TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
TURN = OutboxItem(
    key="s\x1ft1",
    kind="turn",
    payload={
        "trace_id": TRACE, "span_id": SPAN, "turn_id": "t1", "turn_name": "get_weather",
        "turn_kind": "tool_call", "label": "ok", "session_id": "s",
    },
)  # fmt: skip
METRIC = OutboxItem(
    key="s\x1ft1\x1ftool_execution",
    kind="metric",
    payload={
        "trace_id": TRACE, "span_id": SPAN, "turn_id": "t1", "session_id": "s",
        "name": "tool_execution", "outcome": "pass",
    },
)  # fmt: skip


class _Collector(BaseHTTPRequestHandler):
    paths: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).paths.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def collector() -> Iterator[tuple[str, list[str]]]:
    _Collector.paths = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", _Collector.paths
    server.shutdown()


@pytest.mark.parametrize(
    ("signals", "posted"),
    [("spans", ["/v1/traces"]), ("logs", ["/v1/logs"]), ("both", ["/v1/traces", "/v1/logs"])],
)
def test_otlp_sink_sends_only_the_chosen_signals_and_acknowledges_all(
    collector: tuple[str, list[str]], signals: str, posted: list[str]
) -> None:
    endpoint, paths = collector
    settings = OtlpSink.Settings(endpoint=endpoint, protocol="http/protobuf", signals=signals)
    sink = OtlpSink.from_settings(settings)
    try:
        accepted = sink.deliver([TURN, METRIC])
    finally:
        sink.close()
    assert paths == posted
    assert sorted(accepted) == sorted([TURN.key, METRIC.key])  # nothing left to retry


def test_spool_defaults_to_the_user_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert ServeSettings().spool_path == tmp_path / "aem" / "serve-spool.sqlite"
