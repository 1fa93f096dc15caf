"""The MLflow sink against a real MLflow server: AEM's verdicts as assessments, idempotent.

A sample run is exported to MLflow, audited from there, and its verdict items written by
:class:`MlflowSink` twice; a reviewer's feedback written through MLflow's own client on
the same span, under the same name as one of AEM's metrics, must survive both runs, and
AEM's assessments must be there once each (updated in place, not duplicated). Everything
is read back through ``mlflow.get_trace`` in MLflow's own virtualenv.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from typing import Any

import pytest

from aem.sinks.base import DeliveryError
from aem.sinks.mlflow import LABEL_NAME, MlflowSink, mlflow_trace_id, turn_name
from aem.sinks.records import OutboxItem, verdict_items
from tests.mlflow.auditing import audit_source
from tests.mlflow.kit import MlflowServer
from tests.mlflow.mlflow_client import assessments, log_human_feedback
from tests.mlflow.sending import send_to_mlflow
from tests.serve.conftest import SAMPLES, free_port

pytestmark = pytest.mark.slow

SAMPLE = SAMPLES / "parallel_tools.otlp.jsonl"


@pytest.fixture(scope="module")
def items(mlflow_server: MlflowServer) -> list[OutboxItem]:
    """The verdict items of the sample, audited from MLflow."""
    name, experiment_id = mlflow_server.experiment("sink")
    send_to_mlflow(mlflow_server.base, experiment_id, [SAMPLE])
    report = audit_source(f"mlflow://{mlflow_server.hostport}/{name}")
    found = [i for s in report.sessions for i in verdict_items(s, completed_at=0.0)]
    assert any(i.kind == "turn" and i.payload["label"] == "root_cause" for i in found)
    return found


def _name(item: OutboxItem) -> str:
    """The per-turn assessment's name: the turn's id before the metric's or ``aem.label``."""
    p = item.payload
    return turn_name(p["turn_id"], p["name"] if item.kind == "metric" else LABEL_NAME)


def _ours(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in found if a["source_type"] == "CODE" and a["source_id"] == "aem"]


def test_verdicts_land_on_their_spans_and_rerunning_replaces_only_aems(
    mlflow_server: MlflowServer, items: list[OutboxItem]
) -> None:
    on_spans = [i for i in items if i.kind != "session"]
    traces = sorted({mlflow_trace_id(i.payload["trace_id"]) for i in on_spans})
    metric = next(i for i in items if i.kind == "metric")
    human = {
        "trace_id": mlflow_trace_id(metric.payload["trace_id"]),
        "span_id": metric.payload["span_id"],
        "name": metric.payload["name"],
        "value": False,
        "rationale": "a reviewer disagrees",
        "who": "reviewer@example.com",
    }
    log_human_feedback(mlflow_server.base, **human)

    sink = MlflowSink(f"mlflow://{mlflow_server.hostport}")
    try:
        assert sink.deliver(items) == [i.key for i in items]
        first = assessments(mlflow_server.base, traces)
        changed = dataclasses.replace(
            metric, payload={**metric.payload, "explanation": "explained again"}
        )
        again = [changed if i is metric else i for i in items]
        assert sink.deliver(again) == [i.key for i in items]
        second = assessments(mlflow_server.base, traces)
    finally:
        sink.close()

    expected = Counter((_name(i), i.payload["span_id"]) for i in on_spans)
    for found in (first, second):
        ours = [a for a in _ours(found) if a["span_id"]]
        assert Counter((a["name"], a["span_id"]) for a in ours) == expected  # once each
        humans = [a for a in found if a["source_type"] == "HUMAN"]
        assert [(h["name"], h["span_id"], h["value"], h["rationale"]) for h in humans] == [
            (human["name"], human["span_id"], False, "a reviewer disagrees")
        ]
    assert {a["id"] for a in _ours(first)} == {a["id"] for a in _ours(second)}  # in place

    by_place = {(a["name"], a["span_id"]): a for a in _ours(second)}
    for item in (i for i in again if i.kind != "session"):
        p = item.payload
        if item.kind == "metric":
            written = by_place[(_name(item), p["span_id"])]
            assert (written["value"], written["rationale"]) == (p["outcome"], p["explanation"])
        else:
            written = by_place[(_name(item), p["span_id"])]
            assert written["value"] == p["label"]
            for root in p["root_cause_span_ids"]:
                assert root in written["rationale"]
        assert written["trace_id"] == mlflow_trace_id(p["trace_id"])
        assert written["metadata"]["aem.idempotency_key"] == item.key
    assert by_place[(_name(metric), metric.payload["span_id"])]["rationale"] == ("explained again")


def test_a_trace_mlflow_does_not_have_stops_the_batch_after_what_was_written(
    mlflow_server: MlflowServer, items: list[OutboxItem]
) -> None:
    first_trace = items[0].payload["trace_id"]
    known = [i for i in items if i.payload.get("trace_id") == first_trace]
    unknown = dataclasses.replace(
        known[0], key="elsewhere", payload={**known[0].payload, "trace_id": "f" * 32}
    )
    sink = MlflowSink(mlflow_server.base)
    try:
        assert sink.deliver([*known, unknown]) == [i.key for i in known]
        with pytest.raises(DeliveryError, match=r"traces/tr-f{32}: no such trace"):
            sink.deliver([unknown])
    finally:
        sink.close()


def test_server_down_is_a_bounded_delivery_error(items: list[OutboxItem]) -> None:
    sink = MlflowSink(f"http://127.0.0.1:{free_port()}", timeout=2)
    started = time.monotonic()
    try:
        with pytest.raises(DeliveryError, match=r"mlflow GET http://127.*unreachable"):
            sink.deliver(items)
    finally:
        sink.close()
    assert time.monotonic() - started < 15


def test_each_trace_gets_one_trace_level_verdict_naming_the_root_cause(
    mlflow_server: MlflowServer, items: list[OutboxItem]
) -> None:
    """MLflow's traces table shows AEM's label without opening the trace: one ``aem.label``
    assessment with no span id per trace, naming the root-cause turn and metric; delivered
    again, it is updated in place, never duplicated."""
    [session] = [i for i in items if i.kind == "session"]
    root = session.payload["root_cause"]
    assert session.payload["label"] == "root_cause" and root["metrics"]
    traces = [mlflow_trace_id(t["trace_id"]) for t in session.payload["traces"]]
    sink = MlflowSink(mlflow_server.base)
    try:
        assert sink.deliver([session]) == [session.key]
        first = [a for a in _ours(assessments(mlflow_server.base, traces))
                 if a["name"] == LABEL_NAME and not a["span_id"]]  # fmt: skip
        assert sink.deliver([session]) == [session.key]
        second = [a for a in _ours(assessments(mlflow_server.base, traces))
                  if a["name"] == LABEL_NAME and not a["span_id"]]  # fmt: skip
    finally:
        sink.close()
    assert sorted(a["trace_id"] for a in first) == sorted(traces)  # one per trace
    assert sorted(a["id"] for a in second) == sorted(a["id"] for a in first)  # in place
    [written] = [a for a in second if a["trace_id"] == mlflow_trace_id(root["trace_id"])]
    assert written["span_id"] in (None, "")
    assert written["value"] == "root_cause"
    assert f"root cause: turn {root['turn_id']}" in written["rationale"]
    assert root["metrics"][0] in written["rationale"]
    assert written["metadata"]["aem.root_cause_turn_id"] == root["turn_id"]
    assert written["metadata"]["aem.root_cause_metrics"] == ", ".join(root["metrics"])
    assert written["metadata"]["aem.idempotency_key"] == session.key
