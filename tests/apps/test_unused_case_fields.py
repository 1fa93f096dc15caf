"""What ``aem audit`` cannot use, it says: case fields only a judge reads, given with no
judge in the run, are named once on stderr with what would read them — never accepted in
silence; with a judge configured, nothing is said."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aem.cli import app

TRACE = "sample_traces/parallel_tools.otlp.jsonl"


def _cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"session_id": "a", "reference_answer": "30 days", "judge_instruction": "be strict"},
        {"session_id": "b", "reference_answer": "no refunds"},
        {"session_id": "c", "key_points": ["refund"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _audit(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", TRACE, "--no-progress", *args])
    return result.exit_code, result.stderr


def test_judge_only_fields_without_a_judge_are_named_once(tmp_path: Path) -> None:
    code, err = _audit("--cases", str(_cases(tmp_path)))
    assert code in (0, 1)
    flat = " ".join(err.split())
    assert flat.count("cases give reference_answer (2 cases)") == 1
    assert "cases give judge_instruction (1 case)" in flat
    assert "configure [judges]" in flat and "aem test" in flat
    assert "key_points" not in flat  # read by correctness.completeness: used


def test_with_a_judge_configured_nothing_is_said(tmp_path: Path) -> None:
    config = tmp_path / "aem.toml"
    config.write_text(
        '[judges.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        '[metrics."check.relevance"]\njudge = "local"\n'
    )
    code, err = _audit("--cases", str(_cases(tmp_path)), "--config", str(config))
    assert code in (0, 1) and "cases give" not in err
