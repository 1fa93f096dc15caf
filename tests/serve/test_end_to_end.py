"""Real OTLP exporters (gRPC and HTTP, separate processes) → aem serve → verdicts equal the
library's evaluation of the same spans; a real downstream OTLP server receives the
``gen_ai.evaluation.result`` events and evaluation spans on the evaluated spans' ids."""

from __future__ import annotations

import pytest

from tests.serve.conftest import send, wait_for
from tests.serve.downstream import Downstream
from tests.serve.expected import (
    CASES,
    assert_same_verdicts,
    delivered_session_labels,
    delivered_verdicts,
    expected_session_labels,
    expected_verdicts,
    sample_files,
)

pytestmark = pytest.mark.slow


def test_exporters_to_serve_to_downstream(serve_factory) -> None:
    downstream = Downstream().start()
    try:
        serve = serve_factory(
            "serve",
            "--cases",
            str(CASES),
            "--otlp-endpoint",
            f"http://127.0.0.1:{downstream.port}",
        )
        files = sample_files()
        grpc_files, http_files = files[::2], files[1::2]
        sent_grpc = send("grpc", serve.grpc, grpc_files)
        sent_http = send("http", f"{serve.http}/v1/traces", http_files)
        assert sent_grpc["failed"] == 0 and sent_http["failed"] == 0

        expected = expected_verdicts(files)
        wait_for(
            lambda: len(serve.verdicts()) >= len(expected) + len(expected_session_labels(files)),
            timeout=90,
            what="all verdicts in the JSONL sink",
        )
        assert_same_verdicts(delivered_verdicts(serve.verdicts()), expected)
        # One session item per session, labelled as the audit's turns roll up.
        assert delivered_session_labels(serve.verdicts()) == expected_session_labels(files)

        # The downstream got one event per metric result and one span per turn.
        metric_keys = [k for k in expected if k[2] != "aem.label"]
        turn_keys = [k for k in expected if k[2] == "aem.label"]
        received = downstream.received
        wait_for(
            lambda: (
                len(received.events) >= len(metric_keys) and len(received.spans) >= len(turn_keys)
            ),
            timeout=30,
            what="downstream",
        )
        by_key = {
            (
                e["attributes"]["aem.session.id"],
                e["span_id"],
                e["attributes"]["gen_ai.evaluation.name"],
            ): e
            for e in received.events
        }
        assert set(by_key) == set(metric_keys)
        traces = {ln["span_id"]: ln["trace_id"] for ln in serve.verdicts() if "span_id" in ln}
        for (session, span_id, name), event in by_key.items():
            assert event["event_name"] == "gen_ai.evaluation.result"
            assert event["trace_id"] == traces[span_id]
            assert (
                event["attributes"]["gen_ai.evaluation.score.label"]
                == expected[(session, span_id, name)][0]
            )
            # Live verdicts name their evaluator as the audit's do (aem.foundation.provenance).
            assert event["attributes"]["aem.evaluation.evaluator.id"] == f"aem/{name}"
            assert event["attributes"]["aem.evaluation.evaluator.type"] in (
                "rule",
                "embedding",
                "judge",
            )
        assert len(received.spans) == len(turn_keys)
        for span in received.spans:
            evaluated = span["attributes"]["aem.evaluated_span_id"]
            # A trace of its own, linked to the span it judges: the agent's trace is untouched.
            assert span["parent_span_id"] == ""
            assert span["trace_id"] != traces[evaluated]
            assert span["links"] == [(traces[evaluated], evaluated)]
            assert span["attributes"]["aem.evaluated_trace_id"] == traces[evaluated]
            session = span["attributes"]["aem.session.id"]
            assert span["attributes"]["aem.label"] == expected[(session, evaluated, "aem.label")][0]
            if span["attributes"]["aem.label"] == "prior_action_failed":
                assert span["attributes"]["aem.root_cause.span_id"]
        assert serve.stop() == 0
    finally:
        downstream.stop()
