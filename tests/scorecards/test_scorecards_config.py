"""Scorecard configs are checked on save (``aem scorecard check``) and on load (``aem audit
--scorecard``): each refusal says what would go wrong, and all of them come at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scorecards_kit import SAMPLE_CONFIG, SAMPLE_DIR, cli, write_config, write_pipeline

STANDARD = {
    "greeting": {"greeted": 10, "named_company": 10},
    "resolution": {"solved": 15, "clarity": 10},
}
ALL_LISTED = {"transcribe": 0, "route": 0, "language": 0, "greeting": 1, "resolution": 1}


@pytest.fixture
def pipeline(tmp_path: Path) -> Path:
    return write_pipeline(tmp_path / "pipeline.yaml", STANDARD)


def check(config: Path, *extra: str) -> tuple[int, str]:
    code, out, err = cli("scorecard", "check", str(config), *extra)
    return code, " ".join((out + err).split())  # rich wraps long lines


def test_the_sample_config_is_valid_and_its_scale_is_20_plus_25() -> None:
    code, out = check(SAMPLE_CONFIG)
    assert code == 0, out
    assert "scale 0–45 step points" in out and "pass at 30" in out
    assert "greeting 20×1" in out and "resolution 25×1" in out
    assert "transcribe 0×0 (not counted)" in out


def test_pipeline_option_names_the_definition(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        SAMPLE_CONFIG.read_text().replace('definition = "support-qa.pipeline.yaml"\n', "")
    )
    code, out = check(config)
    assert code == 2 and "--pipeline" in out
    code, out = check(config, "--pipeline", str(SAMPLE_DIR / "support-qa.pipeline.yaml"))
    assert code == 0 and "scale 0–45" in out


REFUSALS = {
    "a_qa_without_level2": (None, "qa_without_level2", "no conversation could be scored"),
    "b_unknown_step": (
        {**ALL_LISTED, "sentiment": 1, "tone": 0},
        "unknown_step",
        "'sentiment', 'tone'",
    ),
    "c_weighted_routing": (
        {**ALL_LISTED, "route": 1},
        "weighted_non_scoring_step",
        "cannot produce a score and would block every conversation forever",
    ),
    "d_unlisted_scoring_step": (
        {k: v for k, v in ALL_LISTED.items() if k != "resolution"},
        "unlisted_scoring_step",
        "'resolution'; each would silently drop out of the total",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_refusal_has_its_own_message(case: str, tmp_path: Path, pipeline: Path) -> None:
    weights, code_name, message = REFUSALS[case]
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    code, out = check(config)
    assert code == 1
    assert f"{code_name}: " in out and message in out
    assert "1 violation(s)" in out


def test_e_weighted_step_whose_prompt_has_no_scoring(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", {**STANDARD, "upsell": None})
    config = write_config(tmp_path / "c.toml", {**ALL_LISTED, "upsell": 1}, definition=pipeline)
    code, out = check(config)
    assert code == 1
    assert "weighted_step_without_scoring: " in out
    assert "upsell (prompt 'upsell-p')" in out
    assert "would never produce a score and would block the conversation" in out
    # With weight 0 the same step is a recorded "does not count": accepted.
    config = write_config(tmp_path / "c.toml", {**ALL_LISTED, "upsell": 0}, definition=pipeline)
    assert check(config)[0] == 0


def test_three_violations_are_reported_together(tmp_path: Path, pipeline: Path) -> None:
    weights = {"transcribe": 1, "route": 0, "language": 0, "greeting": 1, "ghost": 1}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    code, out = check(config)
    assert code == 1
    assert "3 violation(s)" in out
    for name in ("unknown_step", "weighted_non_scoring_step", "unlisted_scoring_step"):
        assert f"{name}: " in out


def test_a_non_qa_pipeline_needs_no_level2(tmp_path: Path, pipeline: Path) -> None:
    config = write_config(tmp_path / "c.toml", None, definition=pipeline, qa=False)
    code, out = check(config)
    assert code == 0 and "no level-2 config" in out


def test_a_stated_scale_max_must_be_the_sum(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", {"a": {"x": 100}, "b": {"y": 100}})
    weights = {"transcribe": 0, "route": 0, "language": 0, "a": 1, "b": 1}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline, scale_max=100)
    code, out = check(config)
    assert code == 1 and "scale max 100 differs from 200" in out and "156 / 100" in out


def test_a_misspelt_key_is_an_error_naming_it(tmp_path: Path, pipeline: Path) -> None:
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    config.write_text(config.read_text().replace("weight = 1", "wieght = 1", 1))
    code, out = check(config)
    assert code == 2 and "wieght" in out and "Extra inputs are not permitted" in out


def test_audit_refuses_a_config_check_would_refuse(tmp_path: Path, pipeline: Path) -> None:
    weights = {k: v for k, v in ALL_LISTED.items() if k != "greeting"}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    code, _out, err = cli(
        "audit", str(SAMPLE_DIR), "--scorecard", str(config), "--store", str(tmp_path / "s.db")
    )
    assert code == 2
    assert "unlisted_scoring_step" in " ".join(err.split())
    assert not (tmp_path / "s.db").exists()  # refused before anything was stored
