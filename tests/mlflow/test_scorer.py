"""AEM as MLflow 3 scorers: the guide's ``mlflow.genai.evaluate`` block, run for real.

Three sample runs (one under fresh ids, its sessions with root causes) are exported to a
real MLflow server; the scorer block of docs/integrations/mlflow.md
(``mlflow.search_traces`` then ``mlflow.genai.evaluate`` with ``aem_scorers()``) runs in a
virtualenv holding AEM with its ``mlflow`` extra and nothing else (``make mlflow`` builds
``.venv-mlflow-client``; ``AEM_MLFLOW_CLIENT_VENV`` names another), in a process of its own
since MLflow sets process-wide tracing state. Only the server URL and the experiment are
swapped in; a few lines appended write ``result.metrics`` and ``result.result_df``.

What must hold: the run's ``metrics`` count the root causes, suspects and sessions the file
audit finds; ``result_df`` gives each trace its worst label, its root-cause turn and the
explanation; and the feedback MLflow then holds (read back with MLflow's client) is AEM's
own verdicts, reshaped by the sink's one converter.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import aem
from aem.foundation.model import Label
from aem.sinks.mlflow import LABEL_NAME, SCORE_NAME, feedback, mlflow_trace_id, trace_feedbacks
from aem.sinks.records import verdict_items
from collectors.otlp import decode_json_traces
from tests.mlflow.conversation import write_renamed
from tests.mlflow.kit import MlflowServer
from tests.mlflow.mlflow_client import assessments
from tests.mlflow.sending import send_to_mlflow
from tests.serve.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "integrations" / "mlflow.md"
CLIENT_VENV = Path(os.environ.get("AEM_MLFLOW_CLIENT_VENV", ROOT / ".venv-mlflow-client"))
PYTHON = CLIENT_VENV / "bin" / "python"
SENT = [SAMPLES / f"{n}.otlp.jsonl" for n in ("march_refunds", "weather_openllmetry_legacy")]

# Appended to the guide's block: what evaluate returned, as JSON.
DUMP_RESULT = """
import json as _json
_df = result.result_df
_keep = [c for c in _df.columns if c.endswith(("/value", "/rationale")) or c == "trace_id"]
_json.dump({"metrics": result.metrics, "rows": _df[_keep].astype(object)
            .where(_df[_keep].notna(), None).to_dict(orient="records")},
           open("out.json", "w"), default=str)
"""


def _root_spans(files: list[Path]) -> dict[str, str]:
    """``{MLflow trace id: root span id}`` of the sample traces, read from the files."""
    roots = {}
    for path in files:
        for line in path.read_text().splitlines():
            spans, _ = decode_json_traces(json.loads(line))
            for s in spans:
                if s.parent_span_id is None:
                    roots[mlflow_trace_id(s.trace_id)] = s.span_id
    return roots


def guide_scorer_block(base: str, name: str, experiment_id: str) -> str:
    """The guide's scorer block, pointed at this server and experiment."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
    found = [body for lang, body in blocks if lang == "python" and "aem_scorers()" in body]
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
def client_venv() -> None:
    if not PYTHON.exists():
        pytest.skip(f"aem[mlflow] is not installed at {CLIENT_VENV} (`make mlflow` failed)")


@pytest.fixture(scope="module")
def evaluated(
    client_venv: None, mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[Path], dict[str, Any], list[dict[str, Any]]]:
    """The guide's block run over the samples: the files, its output, MLflow's feedback."""
    tmp = tmp_path_factory.mktemp("scorer")
    files = [*SENT, write_renamed("helpdesk_rag", tmp / "rag.otlp.jsonl", "scorer")]
    name, experiment_id = mlflow_server.experiment("scorer")
    send_to_mlflow(mlflow_server.base, experiment_id, files)
    script = tmp / "score.py"
    script.write_text(guide_scorer_block(mlflow_server.base, name, experiment_id) + DUMP_RESULT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(PYTHON), str(script)], cwd=tmp, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp / "out.json").read_text())
    found = assessments(mlflow_server.base, sorted(_root_spans(files)))
    return files, out, [a for a in found if (a["source_type"], a["source_id"]) == ("CODE", "aem")]


def test_metrics_count_what_the_audit_finds(evaluated: Any) -> None:
    files, out, _ = evaluated
    report = aem.audit_paths([str(f) for f in files])
    root_causes = sum(len(s.root_causes) for s in report.sessions)
    suspects = sum(1 for s in report.sessions for t in s.turns if t.label is Label.SUSPECT)
    assert root_causes >= 4 and suspects >= 1  # the samples hold both
    metrics = out["metrics"]
    assert metrics["aem.root_causes/sum"] == root_causes
    assert metrics["aem.suspects/sum"] == suspects
    assert metrics["aem.sessions/sum"] == len(report.sessions)


def test_result_df_gives_each_trace_its_label_root_cause_and_why(evaluated: Any) -> None:
    files, out, _ = evaluated
    rows = {row["trace_id"]: row for row in out["rows"]}
    report = aem.audit_paths([str(f) for f in files])
    for session in report.sessions:
        [item] = [i for i in verdict_items(session, completed_at=0.0) if i.kind == "session"]
        [trace] = item.payload["traces"]  # one trace per sample session
        row = rows[mlflow_trace_id(trace["trace_id"])]
        root = item.payload["root_cause"] or {}
        assert row["aem.label/value"] == trace["label"]
        assert row["aem.label/rationale"] == trace["explanation"]
        assert row["aem.root_cause/value"] == (root.get("turn_id") or "none")
        for metric in trace["metrics"]:  # each column its worst outcome over the turns
            assert row[f"{metric['name']}/value"] == metric["outcome"]
        for turn in session.turns:
            assert row[f"{turn.turn_id}.aem.label/value"] == str(turn.label)
    labels = Counter(row["aem.label/value"] for row in rows.values())
    assert labels["root_cause"] >= 4 and labels["suspect"] == 1  # what the metrics count


def test_feedback_from_evaluate_is_aems_own_verdicts(evaluated: Any) -> None:
    files, _, ours = evaluated
    report = aem.audit_paths([str(f) for f in files])
    items = [i for s in report.sessions for i in verdict_items(s, completed_at=0.0)]
    per_turn = Counter(
        (f["trace_id"], f["span_id"], f["assessment_name"], f["feedback"]["value"], f["rationale"])
        for f in (feedback(i) for i in items if i.kind != "session")
    )
    # mlflow.genai.evaluate logs every feedback on the trace's root span (its harness sets
    # span_id so); the turn's own span stays in the metadata.
    found = Counter(
        (a["trace_id"], a["metadata"]["aem.span_id"], a["name"], a["value"], a["rationale"])
        for a in ours
        if "aem.span_id" in a["metadata"]
    )
    assert found == per_turn
    roots = _root_spans(files)
    assert {(a["trace_id"], a["span_id"]) for a in ours} == set(roots.items())
    # the trace's own: its worst label and each metric's worst outcome, once per trace
    on_trace = Counter(
        (b["trace_id"], b["assessment_name"], b["feedback"]["value"])
        for i in items
        if i.kind == "session"
        for b in trace_feedbacks(i)
        if b["assessment_name"] != "aem.session"
    )
    trace_level = Counter(
        (a["trace_id"], a["name"], a["value"])
        for a in ours
        if ("aem.span_id" not in a["metadata"] and not a["name"].startswith("aem."))
        or a["name"] in (LABEL_NAME, SCORE_NAME)
    )
    assert trace_level == on_trace
