"""A downstream cannot take the server down, through the real server and a real hostile
HTTP downstream (:mod:`tests.serve.hostile_sink`) behind both the OTLP/HTTP and the
Phoenix sink.

* An endless 200 body: the server used to read it whole (3 GB in ten seconds); now it
  reads at most the response cap and retries later — its peak memory stays flat.
* A dripping body: it used to hold delivery, and SIGTERM did not finish in 60 s; now a
  delivery ends at its deadline and shutdown ends within its documented bound.
* Verdicts not delivered meanwhile stay in the outbox and are delivered once the
  downstream behaves.
"""

from __future__ import annotations

import signal
import time

import pytest

from tests.serve.conftest import send, wait_for
from tests.serve.expected import CASES, SAMPLES
from tests.serve.hostile_sink import HostileSink

pytestmark = pytest.mark.slow

HTTP_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
GRPC_FILE = SAMPLES / "weather_genai.otlp.jsonl"  # session "weather-genai"
SINK_TIMEOUT = 2.0
DRAIN_TIMEOUT = 2.0
OUTBOX_CLOSE_SECONDS = 5.0  # aem.serve.defaults, the documented bound after the drain


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def _start(serve_factory, sink: HostileSink):
    return serve_factory(
        "serve",
        "--cases", str(CASES),
        "--workers", "0",
        "--otlp-endpoint", sink.url,
        "--otlp-protocol", "http/protobuf",
        "--otlp-signals", "spans",
        "--otlp-timeout-seconds", str(SINK_TIMEOUT),
        "--phoenix-url", sink.url,
        "--phoenix-timeout-seconds", str(SINK_TIMEOUT),
        "--drain-timeout-seconds", str(DRAIN_TIMEOUT),
    )  # fmt: skip


def test_endless_answers_cost_no_memory_and_verdicts_wait_in_the_outbox(serve_factory) -> None:
    sink = HostileSink("endless")
    try:
        serve = _start(serve_factory, sink)
        assert send("http", f"{serve.http}/v1/traces", [HTTP_FILE])["failed"] == 0
        wait_for(serve.verdicts, timeout=90, what="the verdict (jsonl sink, not held back)")
        before = _peak_rss_mb(serve.proc.pid)
        # Both sinks retry against the endless body for a while (backing off).
        wait_for(lambda: sink.requests.get("endless", 0) >= 4, timeout=30,
                 what="several deliveries into the endless body")  # fmt: skip
        time.sleep(3)
        grown = _peak_rss_mb(serve.proc.pid) - before
        assert grown < 100, f"peak memory grew {grown:.0f} MB reading endless bodies"
        assert sink.otlp_sessions == set() and sink.phoenix_sessions == set()
        # The downstream recovers: what waited in the outbox is delivered.
        sink.mode = "ok"
        wait_for(
            lambda: (
                sink.otlp_sessions == {"weather-oi"} and sink.phoenix_sessions == {"weather-oi"}
            ),
            timeout=30,
            what="the held verdicts delivered once the sinks behave",
        )
        assert serve.stop() == 0
    finally:
        sink.close()


def test_a_dripping_sink_holds_neither_delivery_nor_shutdown(serve_factory) -> None:
    sink = HostileSink("drip")
    try:
        serve = _start(serve_factory, sink)
        assert send("http", f"{serve.http}/v1/traces", [HTTP_FILE])["failed"] == 0
        wait_for(lambda: sink.requests.get("drip", 0) >= 2, timeout=90,
                 what="two dripping deliveries")  # fmt: skip
        # Each dripping delivery was cut at its deadline: more than one started.
        sink.mode = "ok"
        wait_for(lambda: sink.phoenix_sessions == {"weather-oi"}, timeout=30,
                 what="delivery once the drip stops")  # fmt: skip
        # Drip again, with a verdict pending, and stop the server mid-delivery.
        sink.mode = "drip"
        dripping = sink.requests.get("drip", 0)
        assert send("grpc", serve.grpc, [GRPC_FILE])["failed"] == 0
        wait_for(lambda: sink.requests.get("drip", 0) > dripping, timeout=90,
                 what="a delivery of the second verdict dripping")  # fmt: skip
        started = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        assert serve.proc.wait(60) == 0
        took = time.monotonic() - started
        assert took < DRAIN_TIMEOUT + OUTBOX_CLOSE_SECONDS + 3, f"shutdown took {took:.1f} s"
        assert "weather-genai" not in sink.phoenix_sessions
        serve.stop()
        # Undelivered verdicts stayed in the outbox: the next start delivers them.
        sink.mode = "ok"
        again = serve_factory(
            "again",
            "--workers", "0",
            "--phoenix-url", sink.url,
            "--otlp-endpoint", sink.url,
            "--otlp-protocol", "http/protobuf",
            "--otlp-signals", "spans",
            reuse_spool=serve.spool,
        )  # fmt: skip
        wait_for(lambda: "weather-genai" in sink.phoenix_sessions, timeout=60,
                 what="the pending verdict delivered after the restart")  # fmt: skip
        assert "weather-genai" in sink.otlp_sessions
        assert again.stop() == 0
    finally:
        sink.close()
