"""AEM as an MLflow 3 scorer: the guide's ``mlflow.genai.evaluate`` block, run for real.

Two sample runs are exported to a real MLflow server; the scorer block of
docs/integrations/mlflow.md (``mlflow.search_traces`` then ``mlflow.genai.evaluate`` with
``aem_scorer()``) runs with the real ``mlflow`` library in AEM's own interpreter (``make
mlflow`` installs ``mlflow-skinny`` there; a directory named by ``AEM_MLFLOW_LIB`` is put
on the path instead when set), in a process of its own since MLflow sets process-wide
tracing state. Only the server URL and the experiment are swapped in. The feedback MLflow
then holds on each trace, read back with MLflow's client, must be AEM's own verdicts on
the same spans: those the file audit gives, reshaped by the sink's one converter.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import aem
from aem.sinks.mlflow import feedback, mlflow_trace_id
from aem.sinks.records import verdict_items
from collectors.otlp import decode_json_traces
from tests.mlflow.kit import MlflowServer
from tests.mlflow.mlflow_client import assessments
from tests.mlflow.sending import send_to_mlflow
from tests.serve.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "integrations" / "mlflow.md"
FILES = [SAMPLES / f"{n}.otlp.jsonl" for n in ("march_refunds", "weather_openllmetry_legacy")]


def _root_spans() -> dict[str, str]:
    """``{MLflow trace id: root span id}`` of the sample traces, read from the files."""
    roots = {}
    for path in FILES:
        for line in path.read_text().splitlines():
            spans, _ = decode_json_traces(json.loads(line))
            for s in spans:
                if s.parent_span_id is None:
                    roots[mlflow_trace_id(s.trace_id)] = s.span_id
    return roots


def _scorer_env() -> dict[str, str]:
    paths = [str(ROOT), os.environ.get("AEM_MLFLOW_LIB", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def guide_scorer_block(base: str, name: str, experiment_id: str) -> str:
    """The guide's scorer block, pointed at this server and experiment."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
    found = [body for lang, body in blocks if lang == "python" and "aem_scorer()" in body]
    assert len(found) == 1, "the guide has no single scorer block"
    block = found[0]
    for old, new in (
        ("http://127.0.0.1:5000", base),
        ('"my-agent"', f'"{name}"'),
        ('locations=["1"]', f'locations=["{experiment_id}"]'),
    ):
        assert old in block, f"the scorer block no longer says {old}"
        block = block.replace(old, new)
    return block


@pytest.fixture(scope="module")
def mlflow_library() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import mlflow.genai"], env=_scorer_env(), capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip("the mlflow library is not installed beside AEM (`make mlflow` failed)")


def test_feedback_from_evaluate_is_aems_own_verdicts(
    mlflow_library: None, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    name, experiment_id = mlflow_server.experiment("scorer")
    send_to_mlflow(mlflow_server.base, experiment_id, FILES)
    script = tmp_path / "score.py"
    script.write_text(guide_scorer_block(mlflow_server.base, name, experiment_id))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=_scorer_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    roots = _root_spans()
    ours = [
        a
        for a in assessments(mlflow_server.base, sorted(roots))
        if (a["source_type"], a["source_id"]) == ("CODE", "aem")
    ]
    report = aem.audit_paths([str(f) for f in FILES])
    own = [
        feedback(i)
        for s in report.sessions
        for i in verdict_items(s, completed_at=0.0)
        if i.kind != "session"  # a trace-level verdict: the sink writes it, not evaluate
    ]
    expected = Counter(
        (f["trace_id"], f["span_id"], f["assessment_name"], f["feedback"]["value"], f["rationale"])
        for f in own
    )
    # mlflow.genai.evaluate logs every feedback on the trace's root span (its harness sets
    # span_id so); the turn's own span stays in the metadata.
    found = Counter(
        (a["trace_id"], a["metadata"]["aem.span_id"], a["name"], a["value"], a["rationale"])
        for a in ours
    )
    assert found == expected
    assert {(a["trace_id"], a["span_id"]) for a in ours} == set(roots.items())
    assert any(name == "aem.label" for _, _, name, _, _ in found)
