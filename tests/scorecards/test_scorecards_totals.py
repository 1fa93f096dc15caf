"""Totals of ``aem audit --scorecard``: step points summed in their own scale, weighted,
pending / blocked / complete, from step spans recorded with the real OTel SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scorecards_kit import (
    SAMPLE_CONFIG,
    SAMPLE_DIR,
    StepRun,
    audit_totals,
    cli,
    show,
    support_steps,
    write_config,
    write_pipeline,
    write_run,
)

STANDARD = {
    "greeting": {"greeted": 10, "named_company": 10},
    "resolution": {"solved": 15, "clarity": 10},
}
NON_SCORING = {"transcribe": 0, "route": 0, "language": 0}


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    store = tmp_path_factory.mktemp("store") / "aem.sqlite"
    return store, audit_totals(store, SAMPLE_CONFIG, SAMPLE_DIR)


def test_17_plus_21_is_38_of_45_and_84_4(samples: tuple[Path, dict]) -> None:
    _, totals = samples
    call = totals["call-1001"]["total"]
    assert call["state"] == "complete"
    assert (call["total"], call["max"], call["percent"], call["passed"]) == (38, 45, 84.4, True)
    assert {s["step"]: s["score"] for s in call["steps"] if s["counted"]} == {
        "greeting": 17,
        "resolution": 21,
    }
    assert totals["call-1001"]["version"] == 1 and totals["call-1001"]["new_version"]


def test_complete_below_the_threshold_is_not_passed(samples: tuple[Path, dict]) -> None:
    _, totals = samples
    call = totals["call-1002"]["total"]
    assert (call["state"], call["total"], call["percent"], call["passed"]) == (
        "complete",
        22,
        48.9,
        False,
    )


def test_pending_lists_the_blocking_step_and_shows_no_number(samples: tuple[Path, dict]) -> None:
    store, totals = samples
    call = totals["call-1003"]["total"]
    assert call["state"] == "pending" and call["blocking_steps"] == ["resolution"]
    assert call["total"] is None and call["percent"] is None and call["passed"] is None
    listed = show(store)["call-1003"]
    assert listed["state"] == "pending" and listed["latest"] is None
    _code, out, _ = cli("scorecard", "show", "--store", str(store))
    row = next(line for line in out.splitlines() if "call-1003" in line)
    assert (
        "pending" in row
        and "—" in row
        and not any(ch.isdigit() for ch in row.split("call-1003")[1])
    )


def test_a_blocker_gives_0_not_passed_while_a_step_still_runs(samples: tuple[Path, dict]) -> None:
    store, totals = samples
    call = totals["call-1004"]["total"]
    assert (call["state"], call["total"], call["percent"], call["passed"]) == (
        "blocked",
        0,
        0,
        False,
    )
    assert call["blockers"] == ["greeting.abusive_language"]
    assert call["blocking_steps"] == ["resolution"]  # it had not finished
    assert show(store)["call-1004"]["latest"]["state"] == "blocked"


def test_components_of_100_each_never_give_156_of_100(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", {"tone": {"t": 100}, "facts": {"f": 100}})
    config = write_config(
        tmp_path / "c.toml",
        {**NON_SCORING, "tone": 1, "facts": 1},
        definition=pipeline,
        threshold=100,
    )
    steps = [
        StepRun("tone", "llm_analysis", scores={"t": (78, 100)}),
        StepRun("facts", "llm_analysis", scores={"f": (78, 100)}),
    ]
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-156", steps)
    total = audit_totals(tmp_path / "s.db", config, run)["conv-156"]["total"]
    assert (total["total"], total["max"], total["percent"]) == (156, 200, 78.0)
    _, out, _ = cli("scorecard", "show", "--store", str(tmp_path / "s.db"))
    assert "156 / 200" in out and "156 / 100" not in out


def test_a_weight_0_step_is_listed_and_not_counted(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", {**STANDARD, "upsell": {"offered": 10}})
    weights = {**NON_SCORING, "greeting": 1, "resolution": 1, "upsell": 0}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    upsell = StepRun("upsell", "llm_analysis", scores={"offered": (10, 10)})
    steps = [*support_steps((8, 9), (13, 8)), upsell]
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-w0", steps)
    total = audit_totals(tmp_path / "s.db", config, run)["conv-w0"]["total"]
    assert (total["total"], total["max"], total["percent"]) == (38, 45, 84.4)
    line = next(s for s in total["steps"] if s["step"] == "upsell")
    assert line["weight"] == 0 and not line["counted"] and line["score"] == 10


def test_a_weight_0_step_without_result_does_not_hold_the_total(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", {**STANDARD, "upsell": {"offered": 10}})
    weights = {**NON_SCORING, "greeting": 1, "resolution": 1, "upsell": 0}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-w0b", support_steps((8, 9), (13, 8)))
    assert audit_totals(tmp_path / "s.db", config, run)["conv-w0b"]["total"]["state"] == "complete"


def test_a_weight_2_step_counts_double_in_its_own_scale(tmp_path: Path) -> None:
    pipeline = write_pipeline(tmp_path / "p.yaml", STANDARD)
    weights = {**NON_SCORING, "greeting": 2, "resolution": 1}
    config = write_config(tmp_path / "c.toml", weights, definition=pipeline)
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-w2", support_steps((8, 9), (13, 8)))
    total = audit_totals(tmp_path / "s.db", config, run)["conv-w2"]["total"]
    # 2 × 17 + 21 = 55 of 2 × 20 + 25 = 65; the step's own 17 / 20 is kept as it was.
    assert (total["total"], total["max"], total["percent"]) == (55, 65, 84.6)
    greeting = next(s for s in total["steps"] if s["step"] == "greeting")
    assert (greeting["score"], greeting["max"], greeting["weight"]) == (17, 20, 2)


def test_results_as_events_and_as_attributes_give_the_same_total(tmp_path: Path) -> None:
    by_events = support_steps((8, 9), (13, 8), resolution_as_events=True)
    by_attrs = support_steps((8, 9), (13, 8), resolution_as_events=False)
    runs = [
        write_run(tmp_path / "e.otlp.jsonl", "conv-events", by_events),
        write_run(tmp_path / "a.otlp.jsonl", "conv-attrs", by_attrs),
    ]
    totals = audit_totals(tmp_path / "s.db", SAMPLE_CONFIG, *runs)
    assert totals["conv-events"]["total"]["total"] == totals["conv-attrs"]["total"]["total"] == 38


def test_a_score_above_its_maximum_keeps_the_total_pending(tmp_path: Path) -> None:
    steps = support_steps((8, 9), (13, 8))
    steps[-1].scores = {"solved": (16, 15), "clarity": (8, 10)}
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-bad", steps)
    total = audit_totals(tmp_path / "s.db", SAMPLE_CONFIG, run)["conv-bad"]["total"]
    assert total["state"] == "pending" and total["total"] is None
    resolution = next(s for s in total["steps"] if s["step"] == "resolution")
    assert "'solved': 16 outside 0–15" in resolution["note"]


def test_a_failed_step_keeps_the_total_pending(tmp_path: Path) -> None:
    steps = support_steps((8, 9), None)
    steps.append(StepRun("resolution", "llm_analysis", failed="LLM timeout"))
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-failed", steps)
    total = audit_totals(tmp_path / "s.db", SAMPLE_CONFIG, run)["conv-failed"]["total"]
    assert total["state"] == "pending" and total["blocking_steps"] == ["resolution"]
    resolution = next(s for s in total["steps"] if s["step"] == "resolution")
    assert resolution["note"] == "step failed: LLM timeout"


def test_terminal_audit_prints_the_totals_table(tmp_path: Path) -> None:
    code, out, _ = cli(
        "audit",
        str(SAMPLE_DIR),
        "--scorecard",
        str(SAMPLE_CONFIG),
        "--store",
        str(tmp_path / "s.db"),
        "--no-progress",
    )
    assert code == 0
    row = next(line for line in out.splitlines() if "call-1001" in line and "/ 45" in line)
    assert "38 / 45" in row and "84.4" in row and "passed" in row
