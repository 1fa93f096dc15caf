"""Configuration through the CLI: every kind of misspelling is an error that names the
key and the nearest valid one (exit 2), and ``aem config show`` says where each
effective value came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app
from tests.conftest import SAMPLES


def _aem(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


MISSPELT = [
    ("matching.pass_threshhold=0.5", "matching.pass_threshhold: unknown setting", "pass_threshold"),
    ("matchng.pass_threshold=0.5", "matchng: unknown setting", "matching"),
    ("metrics.tool_executon.x=1", "metrics.tool_executon: unknown metric", "tool_execution"),
    ('metrics.disabled=["tool_choise"]', "metrics.disabled: unknown metric", "tool_choice"),
    (
        "metrics.tool_execution.recovered_error_outcom=1",
        "metrics.tool_execution.recovered_error_outcom: unknown setting",
        "recovered_error_outcome",
    ),
    ('taxonomy=[{category="x", metrc="y"}]', "taxonomy[0].metrc: unknown setting", "metric"),
]


@pytest.mark.parametrize(("override", "message", "nearest"), MISSPELT)
@pytest.mark.parametrize("command", ["audit", "config show"])
def test_a_misspelt_override_names_the_key_and_the_nearest(
    command: str, override: str, message: str, nearest: str
) -> None:
    args = [*command.split(), *([str(SAMPLES)] if command == "audit" else [])]
    code, _, err = _aem(*args, "--set", override)
    assert code == 2
    # on one line: an error is never wrapped at 80 columns
    assert f"{message}" in err and f"(did you mean {nearest!r}?)" in err.split(message)[1]
    assert "Traceback" not in err


def test_a_misspelt_file_key_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "aem.toml"
    path.write_text("[compare]\nnumber_abs_toll = 1\n")
    code, _, err = _aem("config", "show", "--config", str(path))
    assert code == 2
    assert "compare.number_abs_toll: unknown setting (did you mean 'number_abs_tol'?)" in err


def test_config_show_names_the_source_of_each_value(tmp_path: Path) -> None:
    path = tmp_path / "aem.toml"
    path.write_text(
        "[matching]\npass_threshold = 0.7\n"
        '[metrics."correctness.truthfulness"]\nrequire_support = false\n'
    )
    code, out, _ = _aem(
        "config", "show", "--config", str(path), "--set", "compare.number_abs_tol=0.1", "--json"
    )
    assert code == 0
    rows = {row["key"]: (row["value"], row["source"]) for row in json.loads(out)}
    assert rows["matching.pass_threshold"] == (0.7, "file")
    assert rows["compare.number_abs_tol"] == (0.1, "--set")
    assert rows['metrics."correctness.truthfulness".require_support'] == (False, "file")
    # a metric's other settings are shown with their defaults: what the metric runs with
    assert rows["metrics.tool_execution.recovered_error_outcome"][1] == "default"
    assert rows["assembly.idle_spans"] == (20_000, "default")


def test_config_show_table_lists_keys_values_and_sources() -> None:
    code, out, _ = _aem("config", "show", "--set", "matching.pass_threshold=0.5")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("matching.pass_threshold "))
    assert line.split() == ["matching.pass_threshold", "0.5", "--set"]
