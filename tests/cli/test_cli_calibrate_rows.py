"""``aem calibrate`` prints each threshold once: the configured threshold next to a
sweep point that rounds to the same 4 decimals is one row carrying both marks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app

pytestmark = pytest.mark.slow

PAIRS = [
    ("The refund was issued to the customer", "We sent the customer their refund", True),
    ("The refund was issued to the customer", "The parcel shipped this morning", False),
    ("Paris is rainy today", "It is raining in Paris today", True),
    ("Paris is rainy today", "Berlin will be sunny and warm", False),
]


def _thresholds(path: Path, *extra: str) -> tuple[list[str], str]:
    result = CliRunner().invoke(app, ["calibrate", str(path), *extra], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    return [m for m in re.findall(r"│\s*(\d\.\d{4})\s*│", result.stdout)], result.stdout


def test_no_threshold_is_printed_twice(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps({"a": a, "b": b, "same": s}) for a, b, s in PAIRS))
    first, _ = _thresholds(path)
    midpoint = first[1]  # a midpoint between two observed scores, as printed (rounded)
    rows, out = _thresholds(path, "--set", f"compare.text_similarity_threshold={midpoint}")
    assert rows.count(midpoint) == 1, out
    assert len(rows) == len(set(rows))
    assert "current" in out
