"""Scorecard tables print what spans and files said, literally: a conversation id or a
step name can neither send escape sequences to the terminal (clear it, retitle it) nor
be read as rich markup (``[bold]`` vanishing, ``[/]`` raising)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scorecards_kit import (
    SAMPLE_CONFIG,
    StepRun,
    audit_scorecard,
    cli,
    support_steps,
    write_config,
    write_run,
)

HOSTILE = "c\x1b[2J[bold]x[/bold]"
SHOWN = "c\\x1b[2J[bold]x[/bold]"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Room for every cell on one line, so a literal can be found as printed."""
    monkeypatch.setenv("COLUMNS", "200")


def test_show_prints_a_hostile_conversation_id_escaped_and_literal(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run.otlp.jsonl", HOSTILE, support_steps((8, 9), (13, 8)))
    store = tmp_path / "s.db"
    code, out, err = audit_scorecard(store, SAMPLE_CONFIG, run)
    assert code == 0, err
    assert "\x1b" not in out and SHOWN in out  # the audit's totals table
    code, out, err = cli("scorecard", "show", "--store", str(store))
    assert code == 0, err
    assert "\x1b" not in out and SHOWN in out
    assert "38 / 45" in out


def test_a_stray_step_name_is_shown_literally_in_the_totals_table(tmp_path: Path) -> None:
    stray = StepRun("[red]s\x07", "llm_analysis")
    run = write_run(tmp_path / "run.otlp.jsonl", "conv", [*support_steps((8, 9), (13, 8)), stray])
    code, out, err = audit_scorecard(tmp_path / "s.db", SAMPLE_CONFIG, run)
    assert code == 0, err
    assert "\x07" not in out and "ignored, not in the pipeline: [red]s\\x07" in out


def test_check_prints_a_step_name_from_the_config_literally(tmp_path: Path) -> None:
    weights = {"transcribe": 0, "route": 0, "language": 0, "greeting": 1, "resolution": 1}
    config = write_config(
        tmp_path / "c.toml",
        {**weights, "[bold]ghost\\u001b": 1},
        definition=SAMPLE_CONFIG.parent / "support-qa.pipeline.yaml",
    )
    code, out, _ = cli("scorecard", "check", str(config))
    assert code == 1
    assert "'[bold]ghost\\x1b'" in out and "\x1b" not in out


def test_check_ok_prints_pipeline_and_step_names_literally(tmp_path: Path) -> None:
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(
        'name: "[bold]qa\\e"\n'
        'steps: [{name: "[i]greet", kind: llm_analysis, prompt: p}]\n'
        "prompts: {p: {scoring: {criteria: [{name: c, max: 5}]}}}\n"
    )
    config = write_config(tmp_path / "c.toml", {"[i]greet": 1}, definition=pipeline, threshold=1)
    code, out, err = cli("scorecard", "check", str(config))
    assert code == 0, out + err
    assert "pipeline '[bold]qa\\x1b'" in out and "[i]greet 5×1" in out and "\x1b" not in out
