"""An audit that skipped part of its input says so, and ``--strict`` makes that exit 2.

Without ``--strict`` the exit code stays the verdicts' (a directory with one bad line
must not fail a nightly job that only wants the ranking), but stderr says how many
files and records were skipped and where; with it, a CI gate cannot pass on half of its
input."""

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


@pytest.fixture
def partly_bad(tmp_path: Path) -> Path:
    """A clean trace file, a file with two bad records, and a link to nowhere."""
    good = (SAMPLES / "weather_genai.otlp.jsonl").read_text()
    (tmp_path / "good.otlp.jsonl").write_text(good)
    first = good.splitlines()[0]
    (tmp_path / "bad.otlp.jsonl").write_text(f"{first}\nnot json\n{first[:40]}\n")
    (tmp_path / "gone.otlp.jsonl").symlink_to(tmp_path / "no-such-file")
    return tmp_path


def test_skipped_input_is_said_with_where_and_leaves_the_code(partly_bad: Path) -> None:
    code, out, err = _aem("audit", str(partly_bad), "--json", "--no-progress")
    assert code == 0, err  # the good sessions have no root cause
    said = " ".join(err.split())
    assert f"1 file ({partly_bad / 'gone.otlp.jsonl'})" in said
    assert (
        f"2 records ({partly_bad / 'bad.otlp.jsonl'}:2, {partly_bad / 'bad.otlp.jsonl'}:3)" in said
    )
    assert "--strict makes this exit 2" in said
    assert json.loads(out)["spans_read"] > 0  # the rest was read and evaluated


def test_strict_exits_2_when_input_was_skipped(partly_bad: Path) -> None:
    code, _, err = _aem("audit", str(partly_bad), "--strict", "--summary", "--no-progress")
    assert code == 2
    assert "error: 1 file" in err and "2 records" in err and "(--strict)" in err


def test_strict_keeps_the_verdicts_code_when_nothing_was_skipped() -> None:
    code, _, err = _aem("audit", str(SAMPLES / "parallel_tools.otlp.jsonl"), "--strict", "--json")
    assert code == 1  # root causes, and no input skipped
    assert "skipped" not in err


def test_strict_overrides_root_causes_when_input_was_skipped(tmp_path: Path) -> None:
    """Root causes found on part of the input are still part of the input: exit 2."""
    (tmp_path / "p.otlp.jsonl").write_text(
        (SAMPLES / "parallel_tools.otlp.jsonl").read_text() + "{truncated\n"
    )
    assert _aem("audit", str(tmp_path), "--json")[0] == 1
    code, _, err = _aem("audit", str(tmp_path), "--json", "--strict")
    assert code == 2 and "1 record" in err
