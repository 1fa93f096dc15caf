"""A total is never silently wrong: numbers no total can be made of, criteria counted
twice and documents no parser should recurse through are refused when the config loads,
naming the key, with exit 2 (``aem scorecard check`` and ``aem audit --scorecard``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scorecards_kit import SAMPLE_DIR, cli, write_config, write_pipeline

STANDARD = {
    "greeting": {"greeted": 10, "named_company": 10},
    "resolution": {"solved": 15, "clarity": 10},
}
ALL_LISTED = {"transcribe": 0, "route": 0, "language": 0, "greeting": 1, "resolution": 1}
ABSURD = ["inf", "-inf", "nan", "1e308", "-1"]


def check(config: Path) -> tuple[int, str]:
    code, out, err = cli("scorecard", "check", str(config))
    return code, " ".join((out + err).split())  # rich wraps long lines


@pytest.mark.parametrize("value", ABSURD)
def test_an_absurd_weight_is_refused_naming_its_key(tmp_path: Path, value: str) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", STANDARD)
    weights = {**ALL_LISTED, "resolution": value}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)  # type: ignore[arg-type]
    code, out = check(config)
    assert code == 2, out
    assert "level2.participation.4.weight:" in out  # resolution is the fifth listed
    assert "Traceback" not in out


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e308", "-1"])
def test_an_absurd_criterion_max_is_refused_naming_its_key(tmp_path: Path, value: str) -> None:
    criteria = {**STANDARD, "resolution": {"solved": value, "clarity": 10}}
    pipeline = write_pipeline(tmp_path / "p.yaml", criteria)  # type: ignore[arg-type]
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    code, out = check(config)
    assert code == 2, out
    assert "prompts.resolution-p.scoring.criteria.0.max:" in out


@pytest.mark.parametrize("key", ["pass_threshold", "scale.max", "scale.min"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e308"])
def test_an_absurd_scale_or_threshold_is_refused(tmp_path: Path, key: str, value: str) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", STANDARD)
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    text = config.read_text()
    if key == "pass_threshold":
        text = text.replace("pass_threshold = 30", f"pass_threshold = {value}")
    else:
        field = key.split(".")[1]
        text = text.replace("scale = { min = 0 }", f"scale = {{ {field} = {value} }}")
    config.write_text(text)
    code, out = check(config)
    assert code == 2 and f"level2.{key}:" in out, out


def test_a_criterion_listed_twice_is_refused_not_counted_twice(tmp_path: Path) -> None:
    """Before: ``solved`` listed twice made the step's maximum 40 and every score double."""
    pipeline = write_pipeline(tmp_path / "p.yaml", STANDARD)
    pipeline.write_text(
        pipeline.read_text().replace(
            "- {name: solved, max: 15}\n",
            "- {name: solved, max: 15}\n        - {name: solved, max: 15}\n",
        )
    )
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    code, out = check(config)
    assert code == 2, out
    assert "prompts.resolution-p.scoring:" in out and "repeated: solved" in out
    code, _, err = cli(
        "audit", str(SAMPLE_DIR), "--scorecard", str(config), "--store", str(tmp_path / "s.db")
    )
    assert code == 2 and "repeated: solved" in " ".join(err.split())


def test_a_key_written_twice_in_yaml_is_refused(tmp_path: Path) -> None:
    """YAML would keep the last ``max``; which one the author meant is a guess."""
    pipeline = write_pipeline(tmp_path / "p.yaml", STANDARD)
    pipeline.write_text(pipeline.read_text().replace("max: 15}", "max: 15, max: 150}"))
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    code, out = check(config)
    assert code == 2, out
    assert f"{pipeline}: not valid YAML" in out and "key 'max' is written twice" in out


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_a_document_nested_50000_deep_is_exit_2_not_an_internal_error(
    tmp_path: Path, suffix: str
) -> None:
    pipeline = tmp_path / f"p{suffix}"
    nested = "[" * 50_000 + "]" * 50_000
    pipeline.write_text(
        f"name: x\nsteps: {nested}\n" if suffix == ".yaml" else f"steps = {nested}\n"
    )
    config = write_config(tmp_path / "c.toml", ALL_LISTED, definition=pipeline)
    code, out = check(config)
    assert code == 2, out
    assert str(pipeline) in out and "nest" in out
    assert "internal error" not in out and "Traceback" not in out
