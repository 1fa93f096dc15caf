"""The scorecard benchmark still runs, on a pipeline long enough that its generated config
is valid and a conversation over every step totals as complete (no timing asserted)."""

from __future__ import annotations

import json

import pytest

from bench.scorecards.run import main


def test_the_bench_validates_and_totals_a_generated_pipeline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["--steps", "50,100"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["steps"] for r in rows[:2]] == [50, 100]
    assert set(rows[0]) == {"steps", "parse_s", "checks_s", "scorecard_check_s", "total_s"}
    assert set(rows[2]) == {"checks_s", "scorecard_check_s"}  # the growth exponents
