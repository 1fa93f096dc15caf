"""A hostile MLflow cannot hold ``aem audit --sink mlflow`` nor ``aem serve``'s memory.

The MLflow here is a real HTTP server on loopback speaking the part of MLflow's REST API
the sink uses (read a trace's assessments, create, update, delete one); for the traces a
test names it answers the read hostilely:

* ``endless``: 200 and a body that never ends. The sink used to read it whole (the server
  went to 3.27 GB in ten seconds); now it reads up to its cap, and the command ends.
* ``drip``: 200 and one byte every ``DRIP_PACE`` seconds. It used to hold an audit past
  300 s; now each request ends at ``timeout_seconds``, and the audit within its retries.

Either way the other traces of the batch are delivered, the command exits 2 naming the
sink (README: a sink that refuses the verdicts fails the command), and once the server
behaves a re-run delivers the rest.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
import tracemalloc
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from aem.sinks.base import DeliveryError
from aem.sinks.mlflow import MlflowSink, mlflow_trace_id
from aem.sinks.records import OutboxItem, verdict_items
from tests.conftest import run_audit
from tests.scorecards_kit import cli
from tests.serve.conftest import SAMPLES, send, serve_factory, wait_for

__all__ = ["serve_factory"]  # the fixture, imported for the serve test below

FILES = [
    SAMPLES / "weather_genai.otlp.jsonl",  # session weather-genai
    SAMPLES / "weather_openinference.otlp.jsonl",  # session weather-oi
    SAMPLES / "parallel_tools.otlp.jsonl",  # session trip-planner-7
]
HOSTILE_SESSION = "weather-genai"
DRIP_PACE = 0.2
ENDLESS_SECONDS = 60.0
CHUNK = b"x" * 65536
CAP = 1024 * 1024
TRACES = "/api/3.0/mlflow/traces/"


class FakeMlflow(ThreadingHTTPServer):
    """MLflow's assessment endpoints, every trace known; ``hostile`` maps an MLflow trace
    id to the way its read is answered (``endless`` or ``drip``)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), MlflowHandler)
        self.lock = threading.Lock()
        self.hostile: dict[str, str] = {}
        self.assessments: dict[str, dict[str, dict[str, Any]]] = {}  # trace → id → one
        self.bytes_sent = 0  # hostile body bytes written
        self.hostile_reads = 0
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def sessions(self) -> set[str]:
        """The sessions AEM wrote assessments for."""
        with self.lock:
            return {
                a["metadata"]["aem.session_id"]
                for found in self.assessments.values()
                for a in found.values()
            }

    def close(self) -> None:
        self.hostile.clear()
        self.shutdown()
        self.server_close()


class MlflowHandler(BaseHTTPRequestHandler):
    server: FakeMlflow
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _body(self) -> dict[str, Any]:
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return json.loads(data) if data else {}

    def _reply(self, answer: dict[str, Any]) -> None:
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        trace_id = self.path.removeprefix(TRACES)
        mode = self.server.hostile.get(trace_id)
        try:
            if mode is None:
                with self.server.lock:
                    found = list(self.server.assessments.get(trace_id, {}).values())
                info = {"trace_id": trace_id, "assessments": found}
                self._reply({"trace": {"trace_info": info}})
            else:
                with self.server.lock:
                    self.server.hostile_reads += 1
                self._hostile(mode)
        except OSError:
            pass  # the client hung up: what a bounded client does

    def _hostile(self, mode: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(10**12 if mode == "endless" else 100_000))
        self.end_headers()
        until = time.monotonic() + ENDLESS_SECONDS
        while time.monotonic() < until and self.server.hostile:
            if mode == "endless":
                self.wfile.write(CHUNK)
                with self.server.lock:
                    self.server.bytes_sent += len(CHUNK)
            else:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(DRIP_PACE)

    def do_POST(self) -> None:
        trace_id = self.path.removeprefix(TRACES).split("/")[0]
        assessment = {**self._body()["assessment"], "assessment_id": uuid.uuid4().hex}
        with self.server.lock:
            found = self.server.assessments.setdefault(trace_id, {})
            found[assessment["assessment_id"]] = assessment
        self._reply({"assessment": assessment})

    def do_PATCH(self) -> None:
        trace_id, _, assessment_id = self.path.removeprefix(TRACES).split("/")
        update = self._body()["assessment"]
        with self.server.lock:
            self.server.assessments[trace_id][assessment_id].update(update)
        self._reply({"assessment": {"assessment_id": assessment_id}})

    def do_DELETE(self) -> None:
        trace_id, _, assessment_id = self.path.removeprefix(TRACES).split("/")
        with self.server.lock:
            self.server.assessments[trace_id].pop(assessment_id, None)
        self._reply({})


@pytest.fixture
def mlflow() -> Any:
    server = FakeMlflow()
    yield server
    server.close()


def _items() -> list[OutboxItem]:
    code, report, err = run_audit(*map(str, FILES))
    assert code in (0, 1), err
    from aem.foundation.model import SessionReport

    sessions = [SessionReport.model_validate(s) for s in report["sessions"]]
    return [i for s in sessions for i in verdict_items(s, completed_at=0.0)]


def _hostile_trace(items: list[OutboxItem]) -> str:
    return next(
        mlflow_trace_id(i.payload["trace_id"])
        for i in items
        if i.payload["session_id"] == HOSTILE_SESSION
    )


def _config(tmp_path: Path, url: str, timeout: float) -> Path:
    config = tmp_path / "aem.toml"
    table = {"url": f'"{url}"', "timeout_seconds": timeout, "max_response_bytes": CAP}
    config.write_text("[sinks.mlflow]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()))
    return config


def _audit_to(config: Path) -> tuple[int, str, float]:
    """``aem audit FILES --config CONFIG --sink mlflow``: exit code, stderr, seconds."""
    started = time.monotonic()
    code, _, err = cli("audit", *map(str, FILES), "--config", str(config), "--sink", "mlflow")
    return code, " ".join(err.split()), time.monotonic() - started


def test_an_endless_answer_is_read_up_to_the_cap_and_costs_no_memory(
    mlflow: FakeMlflow,
) -> None:
    items = _items()
    mlflow.hostile[_hostile_trace(items)] = "endless"
    sink = MlflowSink(mlflow.url, timeout=10, attempts=1, max_response_bytes=CAP)
    tracemalloc.start()
    started = time.monotonic()
    try:
        delivered = sink.deliver(items)  # stops at the hostile trace; the next goes round it
        again = sink.deliver([i for i in items if i.key not in set(delivered)])
    except DeliveryError as exc:
        raise AssertionError(f"the other traces were not delivered: {exc}") from exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        sink.close()
    took = time.monotonic() - started
    assert peak < 8 * CAP, f"peak {peak / 2**20:.1f} MiB reading endless bodies"
    assert took < 10, f"{took:.1f} s"
    hostile = {i.key for i in items if i.payload["session_id"] == HOSTILE_SESSION}
    assert set(delivered) | set(again) == {i.key for i in items} - hostile
    assert mlflow.sessions() == {"weather-oi", "trip-planner-7"}


def test_an_endless_answer_fails_the_audit_in_bounds_and_the_rest_is_delivered(
    mlflow: FakeMlflow, tmp_path: Path
) -> None:
    mlflow.hostile[_hostile_trace(_items())] = "endless"
    code, err, took = _audit_to(_config(tmp_path, mlflow.url, timeout=5))
    assert code == 2, err
    assert "sink mlflow:" in err and "not delivered after 3 attempts" in err
    assert f"over {CAP:,} bytes; not read further" in err
    assert took < 30, f"the audit took {took:.1f} s"
    # Three reads of the endless trace, each cut at the cap (plus what the sockets hold).
    assert mlflow.hostile_reads == 3
    assert mlflow.bytes_sent < 3 * (CAP + 16 * 2**20), f"{mlflow.bytes_sent:,} bytes written"
    assert mlflow.sessions() == {"weather-oi", "trip-planner-7"}
    mlflow.hostile.clear()  # MLflow behaves again: the re-run delivers the rest
    code, err, _ = _audit_to(_config(tmp_path, mlflow.url, timeout=5))
    assert code in (0, 1) and "sink mlflow:" in err, err
    assert mlflow.sessions() == {"weather-genai", "weather-oi", "trip-planner-7"}


def test_a_dripping_answer_ends_at_the_deadline_and_the_audit_within_its_retries(
    mlflow: FakeMlflow, tmp_path: Path
) -> None:
    mlflow.hostile[_hostile_trace(_items())] = "drip"
    code, err, took = _audit_to(_config(tmp_path, mlflow.url, timeout=1))
    assert code == 2, err
    assert "sink mlflow:" in err and "not delivered after 3 attempts" in err
    assert "no complete answer within 1 s" in err
    # 3 attempts of at most one deadline each, 1.5 s of backoff, the audit itself.
    assert took < 15, f"the audit took {took:.1f} s"
    assert mlflow.hostile_reads == 3
    assert mlflow.sessions() == {"weather-oi", "trip-planner-7"}


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.mark.slow
def test_serve_reads_an_endless_mlflow_within_its_cap_and_stops_in_bounds(
    serve_factory: Any, mlflow: FakeMlflow
) -> None:
    mlflow.hostile["tr-" + _trace_of(FILES[0])] = "endless"
    serve = serve_factory(
        "serve",
        "--workers", "0",
        "--mlflow-url", mlflow.url,
        "--mlflow-timeout-seconds", "2",
        "--drain-timeout-seconds", "2",
    )  # fmt: skip
    assert send("http", f"{serve.http}/v1/traces", [FILES[0]])["failed"] == 0
    wait_for(serve.verdicts, timeout=90, what="the verdict (jsonl sink, not held back)")
    before = _peak_rss_mb(serve.proc.pid)
    wait_for(lambda: mlflow.hostile_reads >= 3, timeout=60,
             what="several deliveries into the endless body")  # fmt: skip
    time.sleep(2)
    grown = _peak_rss_mb(serve.proc.pid) - before
    assert grown < 100, f"peak memory grew {grown:.0f} MB reading endless bodies"
    started = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(60) == 0
    assert time.monotonic() - started < 12  # drain 2 s + the outbox's 5 s + slack
    serve.stop()


def _trace_of(path: Path) -> str:
    found = re.search(r'"traceId"\s*:\s*"([0-9a-f]{32})"', path.read_text())
    assert found, path
    return found.group(1)
