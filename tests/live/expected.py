"""What the verdicts for the sample sessions must be: the library's own evaluation of the
same spans read from the files (the audit path), flattened for comparison with what
``aem serve`` delivered."""

from __future__ import annotations

import json
from pathlib import Path

from aem.cases import load_cases
from aem.evaluate import Evaluator
from collectors.assembler import SessionAssembler
from collectors.otlp import decode_json_traces

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
CASES = SAMPLES / "cases.jsonl"


def sample_files() -> list[Path]:
    return sorted(SAMPLES.glob("*.otlp.jsonl"))


def expected_verdicts(files: list[Path]) -> dict[tuple[str, str, str], tuple]:
    """``(session, evaluated span, metric | 'aem.label') → (outcome/label, score)``."""
    assembler = SessionAssembler(idle=float("inf"))
    clock = 0
    for path in files:
        for line in path.read_text().splitlines():
            spans, issues = decode_json_traces(json.loads(line))
            assert not issues, issues
            for span in spans:
                clock += 1
                assembler.add(span, clock)
    evaluator = Evaluator(cases=load_cases(CASES))
    out: dict[tuple[str, str, str], tuple] = {}
    for session in assembler.drain():
        report = evaluator.evaluate(session)
        for turn in report.turns:
            span = turn.span_ids[0]
            out[(report.session_id, span, "aem.label")] = (str(turn.label), None)
            for metric in turn.metrics:
                out[(report.session_id, span, metric.name)] = (str(metric.outcome), metric.score)
    return out


def delivered_verdicts(lines: list[dict]) -> dict[tuple[str, str, str], tuple]:
    out: dict[tuple[str, str, str], tuple] = {}
    for line in lines:
        if line["kind"] == "turn":
            key = (line["session_id"], line["span_id"], "aem.label")
            value: tuple = (line["label"], None)
        else:
            key = (line["session_id"], line["span_id"], line["name"])
            value = (line["outcome"], line["score"])
        assert key not in out, f"verdict delivered twice: {key}"
        out[key] = value
    return out
