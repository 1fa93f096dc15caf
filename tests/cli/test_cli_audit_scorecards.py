"""``aem audit --scorecard``: the totals are a field of the one audit report, so what
``--json`` prints and what ``--out`` writes cannot disagree; without ``--scorecard`` the
report has no ``scorecards`` key at all (the golden reports stay byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SAMPLES
from tests.scorecards_kit import SAMPLE_CONFIG, StepRun, cli, support_steps, write_run


def test_json_and_out_carry_the_same_totals_and_scorecard_issues(tmp_path: Path) -> None:
    stray = StepRun("no_such_step", "llm_analysis")
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-1", [*support_steps((8, 9), (13, 8)), stray])
    out = tmp_path / "report.json"
    code, printed, err = cli(
        "audit", str(run), "--scorecard", str(SAMPLE_CONFIG), "--store", str(tmp_path / "s.db"),
        "--json", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert code in (0, 1), err
    assert printed == out.read_text(encoding="utf-8") + "\n"
    report = json.loads(printed)
    [scored] = report["scorecards"]
    assert scored["total"]["conversation"] == "conv-1"
    assert (scored["total"]["total"], scored["total"]["max"]) == (38, 45)
    assert scored["version"] == 1 and scored["new_version"] is True
    assert report["skipped"]["by_kind"]["scorecard_unknown_step"] == 1


def test_without_scorecard_neither_output_has_the_key(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    trace = str(SAMPLES / "weather_genai.otlp.jsonl")
    code, printed, err = cli("audit", trace, "--json", "--out", str(out), "--no-progress")
    assert code == 0, err
    assert printed == out.read_text(encoding="utf-8") + "\n"
    assert "scorecards" not in json.loads(printed)
