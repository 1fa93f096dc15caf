"""Reading labelled pairs: JSONL and CSV, with errors that name the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from aem.compare import CompareSettings, SemanticComparator
from aem.compare.calibrate import LabelledPair, calibrate, read_pairs


def test_reads_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text('{"a": "x", "b": 1, "same": true}\n\n{"a": "y", "b": "z", "same": false}\n')
    csv = tmp_path / "pairs.csv"
    csv.write_text("a,b,same\nx,1,yes\ny,z,0\n")
    assert read_pairs(jsonl) == [LabelledPair("x", 1, True), LabelledPair("y", "z", False)]
    assert read_pairs(csv) == [LabelledPair("x", "1", True), LabelledPair("y", "z", False)]


def test_bad_records_name_their_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1, "b": 2, "same": true}\n{"a": 1, "b": 2, "same": "maybe"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_pairs(bad)
    missing = tmp_path / "missing.csv"
    missing.write_text("left,right\n1,2\n")
    with pytest.raises(ValueError, match="columns a, b, same"):
        read_pairs(missing)


def test_pairs_without_free_text_need_no_model() -> None:
    comparator = SemanticComparator(CompareSettings())
    result = calibrate(
        [LabelledPair("$5", 5, True), LabelledPair("ORD-1", "ORD-2", False)], comparator
    )
    assert result.best is None and result.text_pairs == 0
    assert result.fixed_pairs == 2 and result.fixed_errors == []
    assert not comparator.model_loaded
