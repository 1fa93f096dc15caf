"""Backends that misbehave, and traces recorded without a Collector.

A backend that is down, answers 500s, or sends pages that are not span pages gets a clear
error naming the backend and the page, after a bounded number of retries, and nothing is
half-written: no verdict reaches a sink and the incremental ledger does not move. The
misbehaving Phoenix is a real HTTP server on loopback speaking Phoenix's span-page format
(``GET /v1/projects/{project}/spans``); the healthy one is exercised in
tests/collectors/test_phoenix_backend.py.

The OTLP-JSON file exporter records a real SDK-instrumented function, and the file is
audited; a file of base64 ids (``MessageToJson`` output) is refused with a message saying
so, the rest of the file still read.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aem_record import OtlpJsonFileExporter, otlp_json
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from aem.foundation.model import SpanRecord
from collectors.readers import read_batches
from tests.scorecards_kit import cli
from tests.serve.conftest import ROOT, SAMPLES, free_port
from tests.serve.sender import to_readable

WEATHER = SAMPLES / "weather_genai.otlp.jsonl"


def _iso(unix_nano: int) -> str:
    return datetime.fromtimestamp(unix_nano / 1e9, tz=UTC).isoformat()


def phoenix_span(span: SpanRecord) -> dict[str, Any]:
    """A span as Phoenix's REST API gives it."""
    return {
        "id": f"Span:{span.span_id}",
        "name": span.name,
        "context": {"trace_id": span.trace_id, "span_id": span.span_id},
        "span_kind": "UNKNOWN",
        "parent_id": span.parent_span_id,
        "start_time": _iso(span.start_unix_nano),
        "end_time": _iso(span.end_unix_nano),
        "status_code": ["UNSET", "OK", "ERROR"][span.status_code],
        "status_message": span.status_message,
        "attributes": span.attributes,
        "events": [
            {"name": e.name, "timestamp": _iso(e.time_unix_nano), "attributes": e.attributes}
            for e in span.events
        ],
    }


def weather_spans() -> list[SpanRecord]:
    return [s for batch in read_batches(str(WEATHER)) for s in batch.spans]


class FakePhoenix:
    """Pages of spans from ``pages`` (one answer per page: a dict is sent as JSON, an int
    is a status code, bytes are sent as they are); ``requests`` records what was asked."""

    def __init__(self, pages: list[Any]) -> None:
        self.pages = pages
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                fake.requests.append(
                    {
                        "path": urlsplit(self.path).path,
                        "query": query,
                        "authorization": self.headers.get("Authorization"),
                    }
                )
                page = int(query.get("cursor", ["0"])[0])
                answer = fake.pages[min(page, len(fake.pages) - 1)]
                if callable(answer):
                    answer = answer()
                if isinstance(answer, int):
                    self._send(answer, b'{"detail": "boom"}')
                elif isinstance(answer, bytes):
                    self._send(200, answer)
                else:
                    self._send(200, json.dumps(answer).encode())

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"phoenix://127.0.0.1:{self.port}/default"

    def __enter__(self) -> FakePhoenix:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def _pages(spans: list[SpanRecord], size: int) -> list[dict[str, Any]]:
    chunks = [spans[i : i + size] for i in range(0, len(spans), size)]
    return [
        {
            "data": [phoenix_span(s) for s in chunk],
            "next_cursor": str(n + 1) if n + 1 < len(chunks) else None,
        }
        for n, chunk in enumerate(chunks)
    ]


@pytest.fixture
def sink_config(tmp_path: Path) -> Path:
    config = tmp_path / "aem.toml"
    config.write_text(f'[sinks.jsonl]\npath = "{tmp_path / "verdicts.jsonl"}"\n')
    return config


def test_pages_are_read_in_start_order_with_the_window_and_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spans = weather_spans()
    monkeypatch.setenv("PHOENIX_API_KEY", "sekret")
    with FakePhoenix(_pages(spans, 3)) as fake:
        code, out, err = cli(
            "audit",
            "--from",
            fake.url,
            "--since",
            "2026-01-01T00:00:00",
            "--until",
            "2027-01-01T00:00:00Z",
            "--json",
        )
    assert code in (0, 1), err
    assert json.loads(out)["spans_read"] == len(spans)
    assert len(fake.requests) == -(-len(spans) // 3)
    first = fake.requests[0]
    assert first["path"] == "/v1/projects/default/spans"
    assert first["query"]["sort"] == ["start_time"] and first["query"]["order"] == ["asc"]
    assert first["query"]["start_time"] == ["2026-01-01T00:00:00+00:00"]
    assert first["query"]["end_time"] == ["2027-01-01T00:00:00+00:00"]
    assert {r["authorization"] for r in fake.requests} == {"Bearer sekret"}


def test_a_backend_that_is_down_is_named_with_its_page() -> None:
    url = f"phoenix://127.0.0.1:{free_port()}/default"
    code, out, err = cli("audit", "--from", url, "--json")
    assert code == 2 and out == ""
    assert f"{url}: page 1: unreachable" in err and "gave up after 3 attempts" in err


def test_500s_mid_way_deliver_nothing_and_leave_the_ledger_alone(
    tmp_path: Path, sink_config: Path
) -> None:
    pages: list[Any] = _pages(weather_spans(), 4)
    pages[1] = 500
    store = tmp_path / "aem.sqlite"
    with FakePhoenix(pages) as fake:
        for since in ([], ["--since", "last", "--store", str(store)]):
            code, out, err = cli(
                "audit",
                "--from",
                fake.url,
                *since,
                "--config",
                str(sink_config),
                "--sink",
                "jsonl",
                "--json",
            )
            assert code == 2 and out == ""
            assert f"{fake.url}: page 2: answered 500" in " ".join(err.split())
            assert "gave up after 3 attempts" in " ".join(err.split())
    assert [r["query"].get("cursor") for r in fake.requests].count(["1"]) == 6  # 3 + 3 tries
    verdicts = tmp_path / "verdicts.jsonl"
    assert not verdicts.exists() or verdicts.read_text() == ""
    if store.exists():
        assert sqlite3.connect(store).execute("SELECT * FROM pull_cursors").fetchall() == []


def test_a_retry_cures_a_passing_503() -> None:
    answers = iter([503, None])
    good = _pages(weather_spans(), 1000)[0]
    with FakePhoenix([lambda: next(answers) or good]) as fake:
        code, out, err = cli("audit", "--from", fake.url, "--json")
    assert code in (0, 1), err
    assert len(fake.requests) == 2 and json.loads(out)["spans_read"] == len(good["data"])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b"<html>not json</html>", "page 1: the answer is not JSON"),
        ({"spans": []}, "page 1: the answer has no 'data' list of spans"),
        ({"data": [], "next_cursor": 7}, "page 1: 'next_cursor' is not a string"),
        (404, "page 1: answered 404"),
        (401, "set PHOENIX_API_KEY"),
    ],
)
def test_pages_that_are_not_span_pages_are_refused(answer: Any, message: str) -> None:
    with FakePhoenix([answer]) as fake:
        code, _, err = cli("audit", "--from", fake.url, "--json")
    assert code == 2 and message in " ".join(err.split())
    assert fake.url in err


def test_a_bad_record_is_an_issue_and_the_rest_of_its_page_is_kept() -> None:
    spans = weather_spans()
    [page] = _pages(spans, 1000)
    page["data"].insert(1, {"name": "no context at all"})
    with FakePhoenix([page]) as fake:
        code, out, err = cli("audit", "--from", fake.url, "--json")
    report = json.loads(out)
    assert code in (0, 1), err
    assert report["spans_read"] == len(spans)
    assert [s["session_id"] for s in report["sessions"]] == ["weather-genai"]
    [issue] = report["issues"]
    assert issue["kind"] == "bad_span" and issue["source"] == f"{fake.url} page 1"
    assert issue["line"] == 2


def test_bad_urls_and_options_are_refused_clearly() -> None:
    code, _, err = cli("audit", "--from", "zipkin://127.0.0.1:9411/x")
    assert code == 2 and "unknown trace source 'zipkin://127.0.0.1:9411/x'" in err
    assert "phoenix" in err
    code, _, err = cli("audit", "--from", "phoenix://127.0.0.1:1/default?page_size=5000")
    assert code == 2 and "page_size='5000' must be a whole number 1 to 1000" in err
    code, _, err = cli("audit", str(WEATHER), "--since", "2026-01-01")
    assert code == 2 and "--since and --until need --from URL" in err
    code, _, err = cli("audit")
    assert code == 2 and "no input" in err
    code, _, err = cli("audit", str(WEATHER), "--sink", "jsonl")
    assert code == 2 and "no [sinks.jsonl] table" in err


def _agent(tracer: Any, city: str) -> str:
    """A tiny instrumented agent: one model call asking for a tool, the tool, the answer."""
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "weather",
            "gen_ai.conversation.id": f"recorded-{city}",
        },
    ):
        call = {
            "type": "tool_call",
            "id": "call_1",
            "name": "get_weather",
            "arguments": {"city": city},
        }
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(
                    [
                        {
                            "role": "user",
                            "parts": [{"type": "text", "content": f"Weather in {city}?"}],
                        }
                    ]
                ),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}]),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"city": city}),
                "gen_ai.tool.call.result": json.dumps({"temperature_c": 21}),
            },
        ):
            weather = "21 °C"
        answer = f"It is {weather} in {city}."
        with tracer.start_as_current_span(
            "chat gpt-4o",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                ),
            },
        ):
            return answer


def _recorded(path: Path) -> None:
    """Two runs of the agent through a BatchSpanProcessor into the OTLP-JSON file."""
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter(path)))
    tracer = provider.get_tracer("weather-agent")
    assert _agent(tracer, "Paris") == "It is 21 °C in Paris."
    _agent(tracer, "Rome")
    provider.shutdown()


def test_a_recorded_sdk_function_is_audited(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    _recorded(path)
    lines = path.read_text().splitlines()
    assert lines and all(json.loads(line)["resourceSpans"] for line in lines)
    code, out, err = cli("audit", str(path), "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["spans_read"] == 8 and report["issues"] == []
    assert [s["session_id"] for s in report["sessions"]] == ["recorded-Paris", "recorded-Rome"]
    for session in report["sessions"]:
        kinds = [(t["kind"], t["name"], t["label"]) for t in session["turns"]]
        assert ("tool_call", "get_weather", "ok") in kinds
        assert any(k == "answer" for k, _, _ in kinds)


def test_base64_ids_are_refused_saying_so_and_the_rest_is_read(tmp_path: Path) -> None:
    spans = weather_spans()
    base64_line = MessageToJson(encode_spans([to_readable(s) for s in spans]), indent=None)
    recorded = tmp_path / "mixed.jsonl"
    recorded.write_text(
        base64_line + "\n" + json.dumps(otlp_json([to_readable(s) for s in spans])) + "\n"
    )
    code, out, err = cli("audit", str(recorded), "--json")
    report = json.loads(out)
    assert code in (0, 1), err
    assert report["spans_read"] == len(spans)  # the hex line, whole
    assert [s["session_id"] for s in report["sessions"]] == ["weather-genai"]
    refused = [i for i in report["issues"] if i["kind"] == "base64_ids"]
    assert len(refused) == len(spans) and {i["line"] for i in refused} == {1}
    message = refused[0]["message"]
    assert "is base64, not hex" in message and "MessageToJson" in message
    assert "OtlpJsonFileExporter" in message and "base64.b64decode(id).hex()" in message


@pytest.fixture(autouse=True)
def _no_store_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "default-store.sqlite"))
    yield


def test_the_readme_snippet_records_a_file_aem_audits(tmp_path: Path) -> None:
    """README's "Record traces without a Collector" block, run as written (in a fresh
    interpreter: it sets the process's global tracer provider)."""
    readme = (ROOT / "README.md").read_text()
    [snippet] = [
        b
        for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
        if "OtlpJsonFileExporter" in b
    ]
    program = snippet + (
        "from tests.collectors.test_backend_sources import _agent\n"
        "_agent(trace.get_tracer('agent'), 'Oslo')\n"
        "provider.shutdown()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    code, out, err = cli("audit", str(tmp_path / "traces.jsonl"), "--json")
    assert code == 0, err
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["recorded-Oslo"]


def test_a_sink_that_refuses_fails_the_run_keeps_the_report_and_the_ledger_stays(
    tmp_path: Path,
) -> None:
    spans = weather_spans()
    store = tmp_path / "aem.sqlite"
    with FakePhoenix(_pages(spans, 1000)) as fake:  # it answers no POST: 501 from http.server
        config = tmp_path / "aem.toml"
        config.write_text(f'[sinks.phoenix]\nurl = "http://127.0.0.1:{fake.port}"\n')
        code, out, err = cli(
            "audit",
            "--from",
            fake.url,
            "--since",
            "last",
            "--store",
            str(store),
            "--config",
            str(config),
            "--sink",
            "phoenix",
            "--json",
            "--out",
            str(tmp_path / "report.json"),
        )
    flat = " ".join(err.split())
    # The verdicts are not lost because a downstream refused them (was: nothing written).
    assert code == 2 and [s["session_id"] for s in json.loads(out)["sessions"]]
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads(out)
    assert "sink phoenix:" in flat and "not delivered after 3 attempts" in flat
    assert "phoenix /v1/span_annotations answered 501" in flat
    rows = sqlite3.connect(store).execute("SELECT * FROM pull_cursors").fetchall()
    assert rows == []  # the next --since last reads the same spans again
