"""SIGTERM with sessions still open: they are evaluated and their verdicts flushed before
exit — here to a small real HTTP server speaking Phoenix's span-annotation API shape
(``POST /v1/span_annotations``), which refuses the first requests so the outbox has to
retry."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.serve.conftest import send
from tests.serve.expected import (
    CASES,
    expected_session_labels,
    expected_verdicts,
    sample_files,
)

pytestmark = pytest.mark.slow

HEX16 = re.compile(r"^[0-9a-f]{16}$")


class FakePhoenix(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, refuse_first: int) -> None:
        super().__init__(("127.0.0.1", 0), PhoenixHandler)
        self.refuse_left = refuse_first
        self.annotations: dict[tuple[str, str, str], dict] = {}  # upsert key → annotation
        self.levels: dict[tuple[str, str, str, str], dict] = {}  # trace/session annotations
        self.posts = 0
        self.lock = threading.Lock()


class PhoenixHandler(BaseHTTPRequestHandler):
    server: FakePhoenix

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        level = {"/v1/trace_annotations?sync=true": "trace",
                 "/v1/session_annotations?sync=true": "session"}.get(self.path)  # fmt: skip
        if level is not None:
            with self.server.lock:
                for item in body["data"]:
                    key = (level, item[f"{level}_id"], item["name"], item["identifier"])
                    self.server.levels[key] = item
            return self._reply(200, {"data": [{"id": "1"}] * len(body["data"])})
        if self.path != "/v1/span_annotations?sync=true":
            return self._reply(404, {"detail": "not found"})
        with self.server.lock:
            self.server.posts += 1
            if self.server.refuse_left > 0:
                self.server.refuse_left -= 1
                return self._reply(503, {"detail": "starting"})
            ids = []
            for item in body["data"]:
                assert HEX16.match(item["span_id"]), item
                assert item["annotator_kind"] in {"LLM", "CODE", "HUMAN"}
                assert set(item["result"]) <= {"label", "score", "explanation"}
                key = (item["name"], item["span_id"], item.get("identifier", ""))
                self.server.annotations[key] = item
                ids.append({"id": str(len(self.server.annotations))})
        return self._reply(200, {"data": ids})


def test_sigterm_drains_open_sessions_to_phoenix(serve_factory) -> None:
    phoenix = FakePhoenix(refuse_first=2)
    thread = threading.Thread(target=phoenix.serve_forever, daemon=True)
    thread.start()
    try:
        serve = serve_factory(
            "serve",
            "--cases",
            str(CASES),
            "--session-idle-seconds",
            "600",
            # What is tested is that the drain evaluates and flushes everything, not how
            # fast: on a loaded machine the default 30 s ran out with 5 sessions to go.
            "--drain-timeout-seconds",
            "300",
            "--phoenix-url",
            f"http://127.0.0.1:{phoenix.server_address[1]}",
        )
        files = sample_files()
        assert send("grpc", serve.grpc, files)["failed"] == 0
        assert serve.verdicts() == []  # idle 600 s: nothing is complete yet
        assert serve.stop(timeout=330) == 0  # SIGTERM: drain evaluates and flushes
    finally:
        phoenix.shutdown()
        phoenix.server_close()
    expected = expected_verdicts(files)
    assert phoenix.posts > 2  # refused twice, then retried
    got = {
        (a["metadata"]["session_id"], a["span_id"], a["name"]): a["result"]["label"]
        for a in phoenix.annotations.values()
    }
    assert got == {key: value[0] for key, value in expected.items()}
    sessions = expected_session_labels(files)
    on_traces = {
        a["metadata"]["session_id"]: a["metadata"]["session_label"]
        for key, a in phoenix.levels.items()
        if key[0] == "trace"
    }
    assert on_traces == sessions  # every session's traces carry its verdict
    on_sessions = {
        k[1]: a["result"]["label"] for k, a in phoenix.levels.items() if k[0] == "session"
    }
    # Sessions keyed on an attribute Phoenix makes no session of (OpenLLMetry's) have none.
    assert on_sessions.items() < sessions.items() and len(on_sessions) >= len(sessions) - 2
    assert len(serve.verdicts()) == len(expected) + len(sessions)  # the JSONL sink too
