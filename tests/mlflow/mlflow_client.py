"""MLflow's own Python client, run in MLflow's virtualenv: what a user of MLflow sees.

Why a subprocess: the ``mlflow`` package lives in ``.venv-mlflow`` (``make mlflow``), not
in AEM's; the tests write a reviewer's feedback and read assessments back through
``mlflow.log_feedback`` and ``mlflow.get_trace`` exactly as an MLflow user would.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from tests.mlflow.kit import MLFLOW_VENV

_SCRIPT = r"""
import json, sys
import mlflow
from mlflow.entities import AssessmentSource

request = json.load(sys.stdin)
mlflow.set_tracking_uri(request["uri"])
if request["do"] == "log_feedback":
    f = request["feedback"]
    mlflow.log_feedback(
        trace_id=f["trace_id"], name=f["name"], value=f["value"], rationale=f["rationale"],
        span_id=f["span_id"], source=AssessmentSource(source_type="HUMAN", source_id=f["who"]),
    )
    print(json.dumps([]))
elif request["do"] == "search":
    found = mlflow.search_traces(
        locations=[request["experiment_id"]], filter_string=request.get("filter"),
        return_type="list", include_spans=False,
    )
    print(json.dumps(sorted(t.info.trace_id for t in found)))
elif request["do"] == "sessions":
    out = []
    for session in mlflow.search_sessions(locations=[request["experiment_id"]],
                                          include_spans=False):
        out.append({"id": session.id, "traces": [t.info.trace_id for t in session]})
    print(json.dumps(out))
else:
    out = []
    for trace_id in request["trace_ids"]:
        for a in mlflow.get_trace(trace_id).info.assessments:
            out.append({
                "id": a.assessment_id, "trace_id": a.trace_id, "span_id": a.span_id,
                "name": a.name, "value": a.value, "rationale": a.rationale,
                "source_type": a.source.source_type, "source_id": a.source.source_id,
                "metadata": a.metadata,
            })
    print(json.dumps(out))
"""


def _run(request: dict[str, Any]) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(MLFLOW_VENV / "bin" / "python"), "-c", _SCRIPT],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def assessments(uri: str, trace_ids: list[str]) -> list[dict[str, Any]]:
    """Every assessment of the traces, as ``mlflow.get_trace`` reports them."""
    return _run({"do": "read", "uri": uri, "trace_ids": trace_ids})


def search(uri: str, experiment_id: str, filter_string: str | None = None) -> list[str]:
    """The ids of the experiment's traces ``mlflow.search_traces`` finds for the filter."""
    return _run({"do": "search", "uri": uri, "experiment_id": experiment_id,
                 "filter": filter_string})  # fmt: skip


def sessions(uri: str, experiment_id: str) -> list[dict[str, Any]]:
    """``mlflow.search_sessions``: each session's id and its traces' ids."""
    return _run({"do": "sessions", "uri": uri, "experiment_id": experiment_id})


def log_human_feedback(uri: str, **feedback: Any) -> None:
    """A reviewer's feedback through ``mlflow.log_feedback`` (source HUMAN)."""
    _run({"do": "log_feedback", "uri": uri, "feedback": feedback})
