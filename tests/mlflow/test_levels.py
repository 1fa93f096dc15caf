"""One name, one meaning, per level: what MLflow's traces list and sessions show of AEM.

A conversation of two traces (:mod:`tests.mlflow.conversation`: an ``ok`` trace, then one
whose t5 fails ``tool_execution`` while t4 and t6 pass it) is sent to a real MLflow,
audited from there and written by :class:`MlflowSink`; what MLflow then holds is read
back through its own client (``mlflow.get_trace``, ``search_traces``, ``search_sessions``).
MLflow's traces list shows one value per assessment name and trace, so:

- under a plain name (``aem.label``, each metric's name) a trace holds one assessment, its
  worst over its turns — ``root_cause`` and ``fail`` on the second trace, never ``pass``;
- per-turn verdicts have names unique in their trace (``t5.tool_execution``);
- the session gets ``aem.session`` on its first trace, filed under MLflow's session id, so
  filtering on it finds every trace of the session.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from aem.foundation.model import Label
from aem.sinks.mlflow import (
    LABEL_NAME,
    SCORE_NAME,
    SESSION_METADATA_KEY,
    SESSION_NAME,
    MlflowSink,
    mlflow_trace_id,
)
from aem.sinks.records import verdict_items
from aem.sinks.rollup import LABEL_SCORES
from tests.mlflow.conversation import FAILED_METRIC, write_conversation
from tests.mlflow.kit import MlflowServer
from tests.mlflow.mlflow_client import assessments, search, sessions

pytestmark = pytest.mark.slow

LABEL_ORDER = [str(x) for x in (Label.ROOT_CAUSE, Label.PRIOR_ACTION_FAILED, Label.SUSPECT)]
OUTCOME_ORDER = ["fail", "unverified", "error", "pass", "skip"]


def _worst(values: list[str], order: list[str]) -> str:
    return min(values, key=lambda v: order.index(v) if v in order else len(order))


def test_a_plain_name_holds_the_traces_worst_value_once(written: Any) -> None:
    _, _, report, found = written
    [session] = report.sessions
    assert [str(t.label) for t in session.turns].count("root_cause") == 1
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for a in found:
        by_trace.setdefault(a["trace_id"], []).append(a)
    assert len(by_trace) == 2
    for trace_id, on_trace in by_trace.items():
        turns = [t for t in session.turns if mlflow_trace_id(t.trace_id or "") == trace_id]
        plain = [a for a in on_trace if not a["span_id"]]
        names = Counter(a["name"] for a in plain)
        assert all(n == 1 for n in names.values()), names  # one value per column
        label = next(a for a in plain if a["name"] == LABEL_NAME)
        assert label["value"] == _worst([str(t.label) for t in turns], [*LABEL_ORDER, "ok"])
        for metric in {m.name for t in turns for m in t.metrics}:
            outcomes = [str(m.outcome) for t in turns for m in t.metrics if m.name == metric]
            column = next(a for a in plain if a["name"] == metric)
            assert column["value"] == _worst(outcomes, OUTCOME_ORDER), metric
        # per turn: names unique in the trace, none of them a plain name
        per_turn = Counter(a["name"] for a in on_trace if a["span_id"])
        assert all(n == 1 for n in per_turn.values())
        assert not set(per_turn) & set(names)

    root = next(t for t in session.turns if t.label is Label.ROOT_CAUSE)
    failed_trace = by_trace[mlflow_trace_id(root.trace_id or "")]
    plain = {a["name"]: a for a in failed_trace if not a["span_id"]}
    assert plain[LABEL_NAME]["value"] == "root_cause"
    assert plain[FAILED_METRIC]["value"] == "fail"  # t4 and t6 passed it: not shown here
    assert f"turn {root.turn_id}" in plain[FAILED_METRIC]["rationale"]
    turn_level = {(a["name"], a["value"]) for a in failed_trace if a["span_id"]}
    assert (f"{root.turn_id}.{FAILED_METRIC}", "fail") in turn_level
    assert (f"{root.turn_id}.{LABEL_NAME}", "root_cause") in turn_level


def test_each_trace_scores_its_label_for_the_table_and_charts(written: Any) -> None:
    """``aem.score`` beside ``aem.label`` on each trace, a number MLflow's traces table
    sorts and its charts aggregate: 0 on the trace holding the root cause, never 1 there,
    1 on the ``ok`` one; the label carries the same score in its metadata."""
    _, _, report, found = written
    plain = [a for a in found if not a["span_id"]]
    labels = {a["trace_id"]: a for a in plain if a["name"] == LABEL_NAME}
    scores = {a["trace_id"]: a for a in plain if a["name"] == SCORE_NAME}
    assert sorted(scores) == sorted(labels) and len(scores) == 2  # one per trace
    for trace_id, score in scores.items():
        label = labels[trace_id]["value"]
        assert score["value"] == LABEL_SCORES[label], (label, score["value"])
        assert score["rationale"].startswith(f"{label}: ")
        assert labels[trace_id]["metadata"]["aem.score"] == str(LABEL_SCORES[label])
    root = next(t for t in report.sessions[0].turns if t.label is Label.ROOT_CAUSE)
    assert scores[mlflow_trace_id(root.trace_id or "")]["value"] == 0.0
    assert sorted(s["value"] for s in scores.values()) == [0.0, 1.0]


def test_filtering_on_the_plain_name_finds_the_root_cause_trace(
    written: Any, mlflow_server: MlflowServer
) -> None:
    experiment_id, _, report, _ = written
    root = next(t for t in report.sessions[0].turns if t.label is Label.ROOT_CAUSE)
    hits = search(mlflow_server.base, experiment_id, "feedback.`aem.label` = 'root_cause'")
    assert hits == [mlflow_trace_id(root.trace_id or "")]
    passing = search(mlflow_server.base, experiment_id, f"feedback.`{FAILED_METRIC}` = 'pass'")
    assert mlflow_trace_id(root.trace_id or "") not in passing


def test_the_session_carries_its_verdict(written: Any, mlflow_server: MlflowServer) -> None:
    experiment_id, conversation, report, found = written
    [session] = sessions(mlflow_server.base, experiment_id)
    assert session["id"] == conversation and len(session["traces"]) == 2
    [verdict] = [a for a in found if a["name"] == SESSION_NAME]
    assert verdict["metadata"][SESSION_METADATA_KEY] == conversation
    assert verdict["value"] == "root_cause" and not verdict["span_id"]
    first = min(report.sessions[0].turns, key=lambda t: t.turn_id).trace_id or ""
    assert verdict["trace_id"] == mlflow_trace_id(first)  # on the session's first trace
    # MLflow treats it as the session's: filtering on it finds every trace of the session
    hits = search(mlflow_server.base, experiment_id, f"feedback.`{SESSION_NAME}` = 'root_cause'")
    assert sorted(hits) == sorted(session["traces"])


def test_rewriting_replaces_the_names_an_earlier_aem_wrote(
    written: Any, mlflow_server: MlflowServer
) -> None:
    """An earlier AEM wrote a turn's verdict under the plain name on its span, and
    ``aem.trace`` per trace: written again, only the new names remain — and an evaluation
    run's feedback under a plain name stays that run's."""
    _, _, report, found = written
    items = [i for s in report.sessions for i in verdict_items(s, completed_at=0.0)]
    metric = next(i for i in items if i.kind == "metric")
    trace_id = mlflow_trace_id(metric.payload["trace_id"])
    _post_raw(mlflow_server.base, trace_id, metric.payload["name"], metric.payload["span_id"])
    _post_raw(mlflow_server.base, trace_id, "aem.trace", None)
    # what AEM's scorer logged in an evaluation run is that run's: never touched
    evaluation = {"mlflow.assessment.sourceRunId": "run-1"}
    _post_raw(mlflow_server.base, trace_id, LABEL_NAME, metric.payload["span_id"], evaluation)
    sink = MlflowSink(mlflow_server.base)
    try:
        assert sink.deliver(items) == [i.key for i in items]
    finally:
        sink.close()
    again = [a for a in assessments(mlflow_server.base, [trace_id]) if a["source_id"] == "aem"]
    assert Counter((a["name"], a["span_id"]) for a in again) == Counter(
        (a["name"], a["span_id"]) for a in found if a["trace_id"] == trace_id
    ) + Counter([(LABEL_NAME, metric.payload["span_id"])])  # the run's, kept
    place = (LABEL_NAME, metric.payload["span_id"])
    [kept] = [a for a in again if (a["name"], a["span_id"]) == place]
    assert kept["metadata"] == evaluation


def _post_raw(
    base: str, trace_id: str, name: str, span_id: str | None, metadata: dict[str, str] | None = None
) -> None:
    import httpx

    body: dict[str, Any] = {
        "assessment_name": name,
        "trace_id": trace_id,
        "source": {"source_type": "CODE", "source_id": "aem"},
        "feedback": {"value": "pass"},
    }
    if span_id:
        body["span_id"] = span_id
    if metadata:
        body["metadata"] = metadata
    answer = httpx.post(
        f"{base}/api/3.0/mlflow/traces/{trace_id}/assessments",
        json={"assessment": body},
        timeout=30,
    )
    answer.raise_for_status()


def test_conversation_sample_is_what_the_test_says(tmp_path: Path) -> None:
    """The file itself (no MLflow): two traces, the failed metric passing elsewhere in the
    failing trace — else the first test proves nothing."""
    import aem

    path = tmp_path / "c.otlp.jsonl"
    write_conversation(path, "check")
    [session] = aem.audit_paths([str(path)]).sessions
    assert len({t.trace_id for t in session.turns}) == 2
    root = next(t for t in session.turns if t.label is Label.ROOT_CAUSE)
    same_trace = [t for t in session.turns if t.trace_id == root.trace_id and t is not root]
    outcomes = {str(m.outcome) for t in same_trace for m in t.metrics if m.name == FAILED_METRIC}
    assert "pass" in outcomes
