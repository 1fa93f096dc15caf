"""The pure parts of ``bench.agreement``: the split, the figure arithmetic, the baselines.

Why: the bench guards every later change to AEM's verdicts; its own arithmetic must be
right before its figures can be trusted. Small generated inputs only — no development
data, no model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.agreement import run
from bench.agreement.baselines import (
    CODE_RUN,
    MESSAGE,
    OTHER,
    Guess,
    Step,
    first_call_of,
    first_failed_code_run,
    last_speaker,
    most_messages,
    numbers,
    random_chance,
    run_failed,
    tool_errored,
    unseen_number,
)
from bench.agreement.figures import (
    Cell,
    by_half,
    f1,
    false_positive_rate,
    figure,
    mean,
    precision,
    ratio,
    recall,
    share,
)
from bench.agreement.matching import same_names
from bench.agreement.otlp import SpanView, spans_of
from bench.agreement.split import ALL, CHECK, TUNE, half


def test_the_split_is_the_first_hash_byte_s_parity() -> None:
    # sha256("ragtruth:1")[0] == 151 (odd), sha256("tau-bench:a")[0] == 46 (even)
    assert half("ragtruth", "1") == CHECK
    assert half("tau-bench", "a") == TUNE
    assert half("ragtruth", "2") == TUNE  # 136


def test_the_split_is_stable_and_roughly_even() -> None:
    ids = [f"session-{k}" for k in range(400)]
    halves = [half("some-set", i) for i in ids]
    assert halves == [half("some-set", i) for i in ids]
    assert 150 < halves.count(CHECK) < 250
    assert [half("other-set", i) for i in ids] != halves  # the set's name is in the key


def test_ratio_and_share_keep_their_counts() -> None:
    assert ratio(3, 4) == Cell(0.75, "3/4")
    assert ratio(0, 0) == Cell(None, "0/0")
    assert share([True, False, False, True]) == Cell(0.5, "2/4")
    assert mean([0.5, 0.25]).value == pytest.approx(0.375)


def test_precision_recall_f1_and_clean_failed() -> None:
    # (predicted, actual): tp=2, fp=1, fn=1, tn=2
    pairs = [(True, True), (True, True), (True, False), (False, True)]
    pairs += [(False, False), (False, False)]
    assert precision(pairs) == Cell(2 / 3, "2/3")
    assert recall(pairs) == Cell(2 / 3, "2/3")
    assert f1(pairs).value == pytest.approx(2 / 3)
    assert false_positive_rate(pairs) == Cell(1 / 3, "1/3")
    assert f1([(True, False)]).value is None  # no positives: F1 undefined


def test_always_fail_has_full_recall_and_the_base_rate_as_precision() -> None:
    actual = [True, False, False, True]
    pairs = [(True, a) for a in actual]
    assert recall(pairs).value == 1.0
    assert precision(pairs).value == 0.5
    assert f1(pairs).value == pytest.approx(2 / 3)


def test_by_half_scores_each_half_and_all() -> None:
    rows = [(TUNE, True), (TUNE, False), (CHECK, True), (CHECK, True)]
    cells = by_half(rows, share)
    assert cells[TUNE] == Cell(0.5, "1/2")
    assert cells[CHECK] == Cell(1.0, "2/2")
    assert cells[ALL] == Cell(0.75, "3/4")
    row = figure("s", "f", "AEM", rows, share, "lower")
    assert row.as_json()["check"] == {"value": 1.0, "detail": "2/2"}
    assert row.as_json()["better"] == "lower"


def _chat() -> list[Step]:
    return [
        Step(0, "human", OTHER),
        Step(1, "Planner", MESSAGE),
        Step(2, "Coder", MESSAGE),
        Step(3, "Terminal", CODE_RUN, failed=False),
        Step(4, "Coder", MESSAGE),
        Step(5, "Terminal", CODE_RUN, failed=True),
        Step(6, "Planner", MESSAGE),
        Step(7, "Coder", MESSAGE),
        Step(8, "Verifier", MESSAGE),
    ]


def test_who_when_baselines() -> None:
    steps = _chat()
    assert most_messages(steps) == Guess("Coder", 2)
    assert first_failed_code_run(steps) == Guess("Coder", 4)  # the message with the code
    assert last_speaker(steps) == Guess("Verifier", 8)
    assert random_chance(steps) == (pytest.approx(1 / 4), pytest.approx(1 / 9))
    assert first_failed_code_run(steps[:5]) == Guess(None, None)
    assert most_messages([Step(0, "human", OTHER)]) == Guess(None, None)


def test_most_messages_breaks_ties_by_who_spoke_first() -> None:
    steps = [Step(0, "B", MESSAGE), Step(1, "A", MESSAGE), Step(2, "A", MESSAGE)]
    assert most_messages(steps[:2]) == Guess("B", 0)
    assert most_messages(steps) == Guess("A", 1)


def test_a_code_run_fails_on_an_error_status_or_a_non_zero_exit() -> None:
    assert run_failed("boom", "")
    assert run_failed(None, "exitcode: 1 (execution failed)")
    assert run_failed(None, "The script ran, then exited with Unix exit code 2")
    assert not run_failed(None, "exitcode: 0 (execution succeeded)")
    assert not run_failed(None, "There is no code from the last 1 message")


def test_numbers_not_in_the_passage() -> None:
    assert numbers("paid $1,200.50 on 3 May, ref 12.5") == {"1200.50", "3", "12.5"}
    assert not unseen_number("He won 3 of 12 games.", "Of 12 games he won 3.")
    assert unseen_number("He won 4 games.", "He won 3 games.")
    assert not unseen_number("No numbers here.", "1 2 3")
    assert not unseen_number("It cost 1,200 dollars.", "a price of 1200 dollars")


def _span(span_id: str, start: int, **attributes: object) -> dict[str, object]:
    values = [
        {"key": k.replace("_", "."), "value": {"stringValue": v}} for k, v in attributes.items()
    ]
    return {"spanId": span_id, "name": "x", "startTimeUnixNano": str(start), "attributes": values}


def test_spans_are_read_in_start_order_with_their_error_status() -> None:
    late = _span("b", 20)
    late["status"] = {"code": 2, "message": "failed"}
    record = {"resourceSpans": [{"scopeSpans": [{"spans": [late, _span("a", 10)]}]}]}
    spans = spans_of(record)
    assert [s.span_id for s in spans] == ["a", "b"]
    assert spans[0].error is None and spans[1].error == "failed"


def test_tau_baselines_read_tool_errors_and_the_first_write() -> None:
    def call(span_id: str, tool: str, result: str = "{}") -> SpanView:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.result": result,
        }
        return SpanView(span_id, f"execute_tool {tool}", 0, attributes)

    spans = [call("r", "get_user"), call("w1", "book"), call("w2", "cancel")]
    assert first_call_of(spans, ["cancel", "book"]) == "w1"
    assert first_call_of(spans, ["refund"]) is None
    assert not tool_errored(spans)
    assert tool_errored([*spans, call("e", "book", "Error: no seats")])


def test_the_trivial_matcher_compares_tool_names_only() -> None:
    a = [{"name": "f", "arguments": {"x": 1}}, {"name": "g", "arguments": {}}]
    b = [{"name": "g", "arguments": {}}, {"name": "f", "arguments": {"x": 2}}]
    assert same_names(a, b)
    assert not same_names(a, a[:1])


def test_without_data_the_command_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(run.ENV, raising=False)
    assert run.main(["--sets", "matching"]) == 2
    assert "--data" in capsys.readouterr().err
    assert run.main(["--data", str(tmp_path / "absent")]) == 2
    assert run.main(["--data", str(tmp_path), "--sets", "nope"]) == 2


def test_ragtruth_ceiling_counts_only_spans_a_judge_free_rule_could_check() -> None:
    """The ceiling row: a span with a date, a number or a name counts; a span of plain
    words ("a civil rights lawyer") is one only a judge can decide."""
    from bench.agreement.ragtruth import states_a_value

    assert states_a_value("from August 28th to September 4th.")
    assert states_a_value("reduce the current 30-day processing time")
    assert states_a_value("will benefit the Stephen Hawking Foundation")
    assert not states_a_value("The author, a civil rights lawyer,")
    assert not states_a_value("which critics say is unfair")
