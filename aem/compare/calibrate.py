"""Pick the free-text similarity threshold from labelled pairs, and say how often it errs.

Why: every threshold is configuration, and a threshold nobody measured is a
guess. Given pairs labelled "same"/"different", this sweeps thresholds over the observed
similarity scores and reports, for each, the false-match rate (different pairs called the
same) and the false-mismatch rate (same pairs called different), then picks the threshold
where the two balance. Pairs decided without a threshold (numbers, dates, ids …) are
reported apart: no threshold changes them.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aem.compare.core import SemanticComparator

if TYPE_CHECKING:
    from rich.console import Console

_TRUE = {"1", "true", "yes", "y", "same"}
_FALSE = {"0", "false", "no", "n", "different"}


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """Two values and whether a human says they mean the same."""

    a: Any
    b: Any
    same: bool


@dataclass(frozen=True, slots=True)
class ThresholdRow:
    """Error rates if the text threshold were ``threshold``."""

    threshold: float
    false_match_rate: float
    false_mismatch_rate: float
    false_matches: int
    false_mismatches: int


@dataclass
class CalibrationResult:
    """The sweep, the balanced threshold, and what the threshold cannot change."""

    rows: list[ThresholdRow]
    best: ThresholdRow | None
    current_threshold: float
    current: ThresholdRow | None
    text_pairs: int
    text_same: int
    text_different: int
    fixed_pairs: int = 0
    fixed_errors: list[tuple[LabelledPair, str]] = field(default_factory=list)


def _label(raw: Any, where: str) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().casefold()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{where}: 'same' must be true or false, got {raw!r}")


def read_pairs(path: Path) -> list[LabelledPair]:
    """Labelled pairs from JSONL (``{"a":…, "b":…, "same": true}``) or CSV (a,b,same).

    A malformed record is an error naming its line: a silently skipped label would bias
    the threshold.
    """
    path = Path(path)
    pairs: list[LabelledPair] = []
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                where = f"{path}:{number}"
                if not {"a", "b", "same"} <= set(row):
                    raise ValueError(f"{where}: CSV needs the columns a, b, same")
                pairs.append(LabelledPair(row["a"], row["b"], _label(row["same"], where)))
        return pairs
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON: {exc}") from exc
        if not isinstance(record, dict) or not {"a", "b", "same"} <= set(record):
            raise ValueError(f'{where}: expected {{"a": …, "b": …, "same": true|false}}')
        pairs.append(LabelledPair(record["a"], record["b"], _label(record["same"], where)))
    return pairs


def _row(threshold: float, scored: Sequence[tuple[float, bool]]) -> ThresholdRow:
    same_total = sum(1 for _, same in scored if same)
    diff_total = len(scored) - same_total
    false_matches = sum(1 for score, same in scored if not same and score >= threshold)
    false_mismatches = sum(1 for score, same in scored if same and score < threshold)
    return ThresholdRow(
        threshold,
        false_matches / diff_total if diff_total else 0.0,
        false_mismatches / same_total if same_total else 0.0,
        false_matches,
        false_mismatches,
    )


def calibrate(
    pairs: Iterable[LabelledPair],
    comparator: SemanticComparator,
    *,
    grid: Sequence[float] | None = None,
) -> CalibrationResult:
    """Sweep text thresholds over labelled pairs; pick the one where both errors balance.

    The grid defaults to every midpoint between consecutive observed scores (so each
    distinct decision is tried once) plus the configured threshold. Ties in balance go to
    fewer total errors, then to the higher (stricter) threshold.
    """
    pairs = list(pairs)
    results = comparator.compare_many([(p.a, p.b) for p in pairs])
    scored: list[tuple[float, bool]] = []
    fixed_errors: list[tuple[LabelledPair, str]] = []
    fixed = 0
    for pair, result in zip(pairs, results, strict=True):
        if result.kind == "text" and result.threshold is not None:
            scored.append((result.score, pair.same))
        else:
            fixed += 1
            if result.same != pair.same:
                fixed_errors.append((pair, result.reason))
    current = comparator.settings.text_similarity_threshold
    if grid is None:
        scores = sorted({score for score, _ in scored})
        mids = [(lo + hi) / 2 for lo, hi in itertools.pairwise(scores)]
        edges = [scores[0] - 1e-6, scores[-1] + 1e-6] if scores else []
        grid = sorted({round(t, 6) for t in [*mids, *edges, current] if 0.0 <= t <= 1.0})
    rows = [_row(t, scored) for t in grid] if scored else []
    best = min(
        rows,
        key=lambda r: (
            round(abs(r.false_match_rate - r.false_mismatch_rate), 9),
            r.false_matches + r.false_mismatches,
            -r.threshold,
        ),
        default=None,
    )
    same_count = sum(1 for _, same in scored if same)
    return CalibrationResult(
        rows=rows,
        best=best,
        current_threshold=current,
        current=_row(current, scored) if scored else None,
        text_pairs=len(scored),
        text_same=same_count,
        text_different=len(scored) - same_count,
        fixed_pairs=fixed,
        fixed_errors=fixed_errors,
    )


def render_calibration(
    result: CalibrationResult,
    console: Console,
    *,
    max_rows: int = 21,
    setting: str = "compare.text_similarity_threshold",
) -> None:
    """A rich table of the sweep (thinned to ``max_rows``), the pick and the fixed pairs;
    the advice names ``setting``, the threshold these pairs calibrate."""
    from rich.table import Table

    table = Table(title="compare.text_similarity_threshold calibration")
    table.add_column("threshold", justify="right")
    table.add_column("false match", justify="right")
    table.add_column("false mismatch", justify="right")
    table.add_column("", justify="left")
    rows = result.rows
    if len(rows) > max_rows:
        step = len(rows) / max_rows
        keep = {rows[int(k * step)] for k in range(max_rows)}
        rows = [r for r in result.rows if r in keep or r is result.best]
    # Thresholds closer than the 4 printed decimals (the configured one next to a
    # midpoint) print as the same row: show it once, with both rows' marks.
    shown: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        cells = (
            f"{row.threshold:.4f}",
            f"{row.false_match_rate:.1%} ({row.false_matches}/{result.text_different})",
            f"{row.false_mismatch_rate:.1%} ({row.false_mismatches}/{result.text_same})",
        )
        marks = shown.setdefault(cells, [])
        if row is result.best:
            marks.append("balanced (picked)")
        if abs(row.threshold - result.current_threshold) < 1e-9:
            marks.append("current")
    for cells, marks in shown.items():
        table.add_row(*cells, ", ".join(marks))
    console.print(table)
    if result.best is None:
        console.print("No free-text pairs: the text threshold cannot be calibrated from this file.")
    else:
        console.print(
            f"Picked threshold {result.best.threshold:.4f}: false match "
            f"{result.best.false_match_rate:.1%}, false mismatch "
            f"{result.best.false_mismatch_rate:.1%} over {result.text_pairs} text pairs. "
            f"Set it with --set {setting}={result.best.threshold:.4f}"
        )
    console.print(
        f"{result.fixed_pairs} pairs were decided without a threshold (numbers, dates, ids, "
        f"exact or normalised text); {len(result.fixed_errors)} of them disagree with the label."
    )
    for pair, reason in result.fixed_errors[:10]:
        console.print(f"  labelled same={pair.same}: {reason}")
