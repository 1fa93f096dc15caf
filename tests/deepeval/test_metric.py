"""AEM as a deepeval metric: docs/integrations/deepeval.md's blocks, run with the real deepeval.

deepeval lives in a virtualenv of its own (``make deepeval`` builds ``.venv-deepeval``,
AEM installed there with its dependencies; ``AEM_DEEPEVAL_VENV`` names another). Each
Python block of the guide runs there in a process of its own, as written, with only the
sample paths made absolute, telemetry off and no API key; a few lines appended write what
deepeval holds (score, success, reason, error per test case) as JSON. That must be AEM's
own verdict on the same spans: :func:`aem.audit_paths` on the same files here, in AEM's
interpreter, on the same files or on the spans a one-turn test case becomes, written as one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import aem
from aem.adapters.deepeval_metric import one_turn_spans, verdict_summary
from aem.foundation.model import Outcome, SessionReport
from tests.serve.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "integrations" / "deepeval.md"
DEEPEVAL_VENV = Path(os.environ.get("AEM_DEEPEVAL_VENV", ROOT / ".venv-deepeval"))
PYTHON = DEEPEVAL_VENV / "bin" / "python"

# Appended to the trace-file block: deepeval's own result, as JSON.
DUMP_RESULT = """
import json as _json
_json.dump({"rows": [{"name": t.name, "success": m.success, "score": m.score,
                      "reason": m.reason, "error": m.error}
                     for t in result.test_results for m in t.metrics_data],
            "results": {n: {"breakdown": r.score_breakdown, "score": r.score,
                            "sessions": [x.session_id for x in r.reports]}
                        for n, r in metric.results.items()},
            "reports": [x.session_id for x in metric.reports],
            "breakdown": metric.score_breakdown},
           open("out.json", "w"))
"""
# Appended to the suspect block: the verdict and the reports the metric kept.
DUMP_SUSPECT = """
import json as _json
_json.dump({"success": metric.success, "score": metric.score, "reason": metric.reason,
            "breakdown": metric.score_breakdown,
            "sessions": [r.session_id for r in metric.reports]}, open("out.json", "w"))
"""
# Appended to the test-case block: the metric's verdict and the spans it evaluated.
DUMP_MEASURE = """
import json as _json
_json.dump({"success": metric.success, "score": metric.score, "reason": metric.reason,
            "breakdown": metric.score_breakdown, "input": case.input,
            "output": case.actual_output, "context": case.retrieval_context},
           open("out.json", "w"))
"""


def guide_block(marker: str) -> str:
    """The guide's one Python block containing ``marker``, its sample paths absolute."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
    found = [body for lang, body in blocks if lang == "python" and marker in body]
    assert len(found) == 1, f"the guide has no single Python block with {marker!r}"
    return found[0].replace('"sample_traces/', f'"{SAMPLES}/')


def run_in_deepeval(code: str, tmp_path: Path) -> Any:
    """Run ``code`` with deepeval's interpreter in ``tmp_path``; what it wrote to out.json."""
    script = tmp_path / "block.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONPATH"}
    env.update(
        PYTHONPATH=str(ROOT),
        DEEPEVAL_TELEMETRY_OPT_OUT="1",
        DEEPEVAL_HOME=str(tmp_path / "deepeval-home"),
        DEEPEVAL_NO_INSPECT_PROMPT="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    done = subprocess.run(
        [str(PYTHON), str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((tmp_path / "out.json").read_text())


@pytest.fixture(scope="module")
def deepeval_venv() -> None:
    if not PYTHON.exists():
        pytest.skip(f"deepeval is not installed at {DEEPEVAL_VENV} (`make deepeval` failed)")
    probe = subprocess.run(
        [str(PYTHON), "-c", "import deepeval.metrics, aem"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"},
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"deepeval or AEM does not import in {DEEPEVAL_VENV}: {probe.stderr[-500:]}")


def _failed(reports: list[SessionReport]) -> list[tuple[str, str]]:
    return [
        (t.turn_id, m.name)
        for r in reports
        for t in r.turns
        for m in t.metrics
        if m.outcome is Outcome.FAIL
    ]


def test_trace_file_verdicts_are_aems_own(deepeval_venv: None, tmp_path: Path) -> None:
    out = run_in_deepeval(guide_block("evaluate(") + DUMP_RESULT, tmp_path)
    by_name = {row["name"]: row for row in out["rows"]}
    assert set(by_name) == {"march refunds", "weather", "missing file"}
    cases = aem.load_cases(SAMPLES / "cases.jsonl")
    for name, sample in (("march refunds", "march_refunds"), ("weather", "weather_genai")):
        own = aem.audit_paths(SAMPLES / f"{sample}.otlp.jsonl", cases=cases).sessions
        score, _, reason = verdict_summary(own)
        row = by_name[name]
        assert row["error"] is None
        assert (row["score"], row["reason"]) == (score, reason)
        assert row["success"] is (not _failed(own))
        for cause in (c for r in own for c in r.root_causes):
            assert f"turn {cause.turn_id}" in row["reason"]
            assert all(metric in row["reason"] for metric in cause.metrics)
    # The guide's promise: a failing and a passing session, the failure named.
    assert by_name["march refunds"]["success"] is False
    assert "root cause" in by_name["march refunds"]["reason"]
    assert "correctness.truthfulness" in by_name["march refunds"]["reason"]
    assert by_name["weather"]["success"] is True
    # The malformed test case is reported, and the others were still scored.
    missing = by_name["missing file"]
    assert missing["success"] is False and missing["score"] is None
    assert "no such file or directory" in missing["error"]
    assert "no_such_run.otlp.jsonl" in missing["error"]
    # After deepeval.evaluate the metric the user holds has what its copies measured.
    assert set(out["results"]) == {"march refunds", "weather"}
    for name, sample in (("march refunds", "march_refunds"), ("weather", "weather_genai")):
        own = aem.audit_paths(SAMPLES / f"{sample}.otlp.jsonl", cases=cases).sessions
        score, breakdown, _ = verdict_summary(own)
        found = out["results"][name]
        assert (found["score"], found["breakdown"]) == (score, breakdown)
        assert found["sessions"] == [r.session_id for r in own]
    assert sorted(out["reports"]) == ["refunds-march", "weather-genai"]
    assert out["breakdown"]["correctness.truthfulness"] < 1.0  # march's failure is in it
    assert (tmp_path / ".deepeval").is_dir()  # why .gitignore and the guide name it


def test_a_suspect_only_session_succeeds_and_says_so(deepeval_venv: None, tmp_path: Path) -> None:
    """The guide's suspect block: without the cases file the March run proves nothing
    wrong; it scores 1.0, as the guide says, and the reason names the suspect turn and the
    claims left unverified."""
    out = run_in_deepeval(guide_block("no cases: nothing") + DUMP_SUSPECT, tmp_path)
    own = aem.audit_paths(SAMPLES / "march_refunds.otlp.jsonl").sessions
    assert [str(t.label) for r in own for t in r.turns if str(t.label) != "ok"] == ["suspect"]
    score, breakdown, reason = verdict_summary(own)
    assert score == 1.0
    assert (out["success"], out["score"], out["reason"]) == (True, score, reason)
    assert out["breakdown"] == breakdown
    assert "1 suspect turn, nothing proven wrong" in out["reason"]
    assert "turn t1" in out["reason"]
    assert "'March 2025'" in out["reason"] and "'2025-03-01 to 2025-03-31'" in out["reason"]
    assert out["sessions"] == ["refunds-march"]


def test_test_case_fields_verdict_is_aems_own(deepeval_venv: None, tmp_path: Path) -> None:
    out = run_in_deepeval(guide_block("retrieval_context=[") + DUMP_MEASURE, tmp_path)
    trace = tmp_path / "one_turn.otlp.jsonl"
    documents = one_turn_spans(out["input"], out["output"], out["context"])
    trace.write_text("".join(json.dumps(d) + "\n" for d in documents))
    (own,) = aem.audit_paths(trace).sessions
    score, breakdown, reason = verdict_summary([own])
    assert (out["score"], out["breakdown"], out["reason"]) == (score, breakdown, reason)
    assert out["success"] is False
    # the invented $10 is a value no retrieved passage holds: groundedness proves it;
    # truthfulness, which binds values to records, leaves it unverified (a doubt)
    assert "groundedness" in {m for _, m in _failed([own])}
    truth = [m for t in own.turns for m in t.metrics if m.name == "correctness.truthfulness"]
    assert truth and {m.outcome for m in truth} <= {"unverified", "pass", "skip"}
    assert "$10" in out["reason"]


def test_without_the_invented_sentence_it_passes(deepeval_venv: None, tmp_path: Path) -> None:
    code = guide_block("retrieval_context=[").replace(
        ' You will also get a $10 store credit for the "\n        "inconvenience.', ""
    )
    assert "$10" not in code, "the guide's answer changed: update this test"
    out = run_in_deepeval(code + DUMP_MEASURE, tmp_path)
    assert (out["success"], out["score"]) == (True, 1.0)
    assert out["breakdown"]["groundedness"] == 1.0


def test_spans_in_memory_are_audited_as_the_file() -> None:
    """``metadata["aem_spans"]`` (here the file's OTLP/JSON lines) and ``aem_session``: the
    adapter's own part, which needs no deepeval, against the file's audit."""
    from aem.adapters.deepeval_metric import CaseVerdicts, TestCaseError

    path = SAMPLES / "helpdesk_rag.otlp.jsonl"
    documents = [json.loads(line) for line in path.read_text().splitlines()]
    verdicts = CaseVerdicts()
    for session_id in ("rag-cited", "rag-invented"):
        found = verdicts.reports({"aem_spans": documents, "aem_session": session_id})
        own = [r for r in aem.audit_paths(path).sessions if r.session_id == session_id]
        assert verdict_summary(found) == verdict_summary(own)
        assert _failed(found) == _failed(own)
    with pytest.raises(TestCaseError, match="no session 'nope'"):
        verdicts.reports({"aem_spans": documents, "aem_session": "nope"})
    with pytest.raises(TestCaseError, match="'actual_output' cannot be empty") as missing:
        verdicts.reports({}, "a question", None)
    assert missing.value.missing
