"""``aem calibrate`` through the CLI with the real embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app

pytestmark = pytest.mark.slow


def test_calibrate_picks_a_threshold_that_separates_the_pairs(tmp_path: Path) -> None:
    pairs = [
        ("The refund was issued to the customer", "We sent the customer their refund", True),
        ("The refund was issued to the customer", "The parcel shipped this morning", False),
        ("Paris is rainy today", "It is raining in Paris today", True),
        ("Paris is rainy today", "Berlin will be sunny and warm", False),
        ("1,234.50 EUR", "1 234,50 €", True),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({"a": a, "b": b, "same": s}) for a, b, s in pairs))
    result = CliRunner().invoke(app, ["calibrate", str(path)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "false match 0.0%, false mismatch 0.0%" in result.output
    assert "--set compare.text_similarity_threshold=" in result.output
    assert "1 of them" not in result.output  # the number pair was decided without embeddings


def test_calibrate_reports_a_bad_pairs_file(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"a": "x"}\n')
    result = CliRunner().invoke(app, ["calibrate", str(path)])
    assert result.exit_code == 2
