"""Live scorecard totals: step spans sent by the real OTLP exporter to a real ``aem serve``
process move a conversation's total (pending → complete, blocked at once), and finished
totals reach a real OTLP downstream as an event and a span on the run's root span."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from scripts.generate_scorecard_traces import (
    PIPELINE,
    StepRun,
    add_result_events,
    step_attributes,
    support_steps,
)
from tests.scorecards_kit import SAMPLE_CONFIG, SAMPLE_PIPELINE, show, versions
from tests.serve.conftest import ROOT, wait_for
from tests.serve.downstream import Downstream

pytestmark = pytest.mark.slow


class Pipeline:
    """A pipeline instrumented with the real SDK, exporting each span as it ends."""

    def __init__(self, endpoint: str) -> None:
        self.provider = TracerProvider(resource=Resource({"service.name": "support-qa-live"}))
        self.provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True))
        )
        self.tracer = self.provider.get_tracer("support_qa.pipeline")

    @contextmanager
    def run(self, conversation: str) -> Iterator[trace.Span]:
        attrs = {"gen_ai.conversation.id": conversation, "aem.pipeline.name": PIPELINE}
        root = self.tracer.start_span(f"pipeline {PIPELINE}", attributes=attrs)
        with trace.use_span(root, end_on_exit=True):
            yield root

    def start(self, conversation: str, step: StepRun) -> trace.Span:
        span = self.tracer.start_span(
            f"{step.kind} {step.name}",
            attributes=step_attributes(conversation, step),  # type: ignore[arg-type]
        )
        if step.as_events:
            add_result_events(span, step, 0)
        return span

    def step(self, conversation: str, step: StepRun) -> None:
        self.start(conversation, step).end()


def _ids(span: trace.Span) -> tuple[str, str]:
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}"


def _state(store: Path, conversation: str) -> dict[str, Any] | None:
    return show(store).get(conversation) if store.exists() else None


def _scorecard_lines(serve: Any, conversation: str) -> list[dict]:
    return [
        v
        for v in serve.verdicts()
        if v["session_id"] == conversation and v.get("turn_kind") == "scorecard"
    ]


@pytest.fixture
def live(serve_factory, tmp_path: Path) -> Iterator[tuple[Any, Pipeline, Path, Downstream]]:
    downstream = Downstream().start()
    store = tmp_path / "results.sqlite"
    serve = serve_factory(
        "serve",
        "--scorecard",
        str(SAMPLE_CONFIG),
        "--store-path",
        str(store),
        "--otlp-endpoint",
        f"http://127.0.0.1:{downstream.port}",
    )
    pipeline = Pipeline(serve.grpc)
    try:
        yield serve, pipeline, store, downstream
    finally:
        pipeline.provider.shutdown()
        assert serve.stop() == 0, serve.log()
        downstream.stop()


def _assert_emitted_on_root(serve: Any, downstream: Downstream, conv: str, root: tuple) -> None:
    """The total went out like any verdict: an event and a span on the run's root span."""
    lines = wait_for(
        lambda: len(_scorecard_lines(serve, conv)) == 2 and _scorecard_lines(serve, conv),
        what="the total in the JSONL sink",
    )
    assert {(v["trace_id"], v["span_id"]) for v in lines} == {root}
    event = next(v for v in lines if v["kind"] == "metric")
    assert (event["outcome"], event["score"]) == ("pass", 38)
    assert event["attributes"]["aem.scorecard.percent"] == 84.4
    received = downstream.received

    def mine(items: list[dict]) -> list[dict]:
        return [i for i in items if i["attributes"].get("aem.scorecard.version") == 1]

    wait_for(lambda: mine(received.events) and mine(received.spans), what="the downstream")
    otlp_event, otlp_span = mine(received.events)[0], mine(received.spans)[0]
    assert otlp_event["event_name"] == "gen_ai.evaluation.result"
    assert (otlp_event["trace_id"], otlp_event["span_id"]) == root
    assert otlp_event["attributes"]["gen_ai.evaluation.name"] == "aem.scorecard"
    assert otlp_event["attributes"]["gen_ai.evaluation.score.value"] == 38
    assert otlp_span["parent_span_id"] == "" and otlp_span["links"] == [root]


def test_pending_then_complete_as_the_second_step_arrives_then_a_rescore(live) -> None:
    serve, pipeline, store, downstream = live
    conv = "live-1001"
    greeting, resolution = support_steps((8, 9), (13, 8))[3:]
    with pipeline.run(conv) as root:
        for step in support_steps(None, None):
            pipeline.step(conv, step)
        pipeline.step(conv, greeting)
        pending = wait_for(
            lambda: (s := _state(store, conv)) and s["state"] == "pending" and s,
            what="a pending total after the first LLM step",
        )
        assert pending["blocking_steps"] == ["resolution"] and pending["latest"] is None
        assert _scorecard_lines(serve, conv) == []  # nothing emitted while pending

        pipeline.step(conv, resolution)  # the second step's span arrives
        done = wait_for(
            lambda: (s := _state(store, conv)) and s["state"] == "complete" and s,
            what="the complete total",
        )
        latest = done["latest"]
        assert (latest["total"], latest["max"], latest["percent"], latest["passed"]) == (
            38,
            45,
            84.4,
            True,
        )
        assert latest["version"] == 1
        _assert_emitted_on_root(serve, downstream, conv, _ids(root))

        # Later the resolution step is rescored: version 2, and version 1 is kept.
        pipeline.step(conv, support_steps(None, (15, 10))[3])
        wait_for(
            lambda: (s := _state(store, conv)) and s["latest"]["version"] == 2,
            what="version 2",
        )
    v1, v2 = versions(store, conv)
    assert (v1["total"], v1["percent"]) == (38, 84.4)
    assert (v2["total"], v2["percent"]) == (42, 93.3)
    wait_for(lambda: len(_scorecard_lines(serve, conv)) == 4, what="version 2 emitted")


def test_a_blocker_gives_0_not_passed_while_the_other_step_still_runs(live) -> None:
    serve, pipeline, store, _ = live
    conv = "live-1004"
    greeting, resolution = support_steps((10, 10), (13, 8), abusive=True)[3:]
    with pipeline.run(conv):
        running = pipeline.start(conv, resolution)  # the resolution step is under way
        pipeline.step(conv, greeting)  # … and the greeting's blocker fires
        blocked = wait_for(
            lambda: (s := _state(store, conv)) and s["state"] == "blocked" and s,
            what="the blocked total",
        )
        latest = blocked["latest"]
        assert (latest["total"], latest["percent"], latest["passed"]) == (0, 0, False)
        assert latest["blockers"] == ["greeting.abusive_language"]
        assert blocked["blocking_steps"] == ["resolution"]  # it was still running
        lines = wait_for(lambda: _scorecard_lines(serve, conv), what="the blocked total emitted")
        assert {v["label" if v["kind"] == "turn" else "outcome"] for v in lines} == {"blocked"}
        running.end()  # the other step finishes: still blocked, no new version
        wait_for(
            lambda: len(show(store)[conv]["blocking_steps"]) == 0,
            what="the late step recorded",
        )
    assert [v["version"] for v in versions(store, conv)] == [1]
    assert show(store)[conv]["state"] == "blocked"


def test_serve_refuses_a_scorecard_config_check_would_refuse(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        SAMPLE_CONFIG.read_text()
        .replace('definition = "support-qa.pipeline.yaml"', f'definition = "{SAMPLE_PIPELINE}"')
        .replace('step = "route"\nweight = 0', 'step = "route"\nweight = 1')
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "aem.serve",
            "--scorecard",
            str(config),
            "--grpc-port",
            "0",
            "--http-port",
            "0",
            "--spool-path",
            str(tmp_path / "spool.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 2
    assert "weighted_non_scoring_step" in run.stderr and "route (routing)" in run.stderr
