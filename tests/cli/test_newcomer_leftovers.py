"""The small things a newcomer trips on, each through the CLI or the library as they
meet it: the demo counts agent sessions only, a turn with no case says so, the library
takes a cases path, listing checks leaves no store behind, calibrate names the setting it
calibrates, two identical runs diff to "no change", and --from names every source."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import aem
from aem.cli import app
from tests.conftest import run_audit

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    finally:
        os.chdir(old)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_the_demo_folder_holds_agent_sessions_only() -> None:
    _, report, _ = run_audit("sample_traces/", "--cases", "sample_traces/cases.jsonl")
    ids = {s["session_id"] for s in report["sessions"]}
    assert ids and not any(i.startswith("call-10") for i in ids)  # no scorecard pipeline run


def test_a_turn_with_no_case_says_no_case_not_no_key_points() -> None:
    _, report, _ = run_audit("sample_traces/weather_genai.otlp.jsonl")
    reasons = {
        m["explanation"]
        for s in report["sessions"]
        for t in s["turns"]
        for m in t["metrics"]
        if m["name"] == "correctness.completeness"
    }
    assert reasons == {"no case for this session (--cases)"}


def test_the_library_takes_a_cases_path() -> None:
    report = aem.audit_paths(
        "sample_traces/parallel_tools.otlp.jsonl", cases="sample_traces/cases.jsonl"
    )
    assert report.sessions and all(s.case_found for s in report.sessions)
    with pytest.raises(FileNotFoundError):
        aem.audit_paths("sample_traces/parallel_tools.otlp.jsonl", cases="no/such.jsonl")


def test_listing_checks_leaves_no_store_behind(tmp_path: Path) -> None:
    code, out, _ = _cli("checks", cwd=tmp_path)
    assert code == 0 and "check.relevance" in out
    assert list(tmp_path.iterdir()) == []


def test_calibrate_names_the_setting_it_calibrates(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"a": "the cat sat on the mat", "b": "a cat was sitting on the mat", "same": True},
        {"a": "the cat sat on the mat", "b": "stock prices fell sharply", "same": False},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    setting = "metrics.groundedness.similarity_threshold"
    code, out, _ = _cli("calibrate", str(pairs), "--setting", setting)
    assert code == 0 and f"--set {setting}=" in " ".join(out.split())
    code, _, err = _cli("calibrate", str(pairs), "--setting", "metrics.nope.threshold")
    assert code == 2 and "nope" in err


def test_diff_of_two_identical_runs_says_no_change(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    run_audit("sample_traces/", "--cases", "sample_traces/cases.jsonl", "--out", str(out))
    code, text, _ = _cli("diff", str(out), str(out))
    assert code == 0 and "no change" in text and "┏" not in text


def test_from_help_names_every_source() -> None:
    _, text, _ = _cli("audit", "--help")
    flat = " ".join(text.split())
    assert "phoenix://" in flat and "mlflow://" in flat and "plug-in" in flat
