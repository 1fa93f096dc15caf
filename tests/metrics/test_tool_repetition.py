"""tool_repetition: the same call made more than ``max_repeats`` times is a loop."""

from __future__ import annotations

from aem.metrics.tool_repetition import ToolRepetition, ToolRepetitionSettings
from aem.testing import make_session, make_tool_call, make_turn, run_metric


def _outcomes(*turns, **settings) -> list[tuple[str, str]]:
    metric = ToolRepetition(ToolRepetitionSettings.model_validate(settings))
    return [(r.turn_id, r.outcome.value) for r in run_metric(metric, make_session(*turns))]


def test_the_first_call_past_the_limit_fails_naming_the_earlier_ones() -> None:
    session = make_session(
        make_tool_call("search", {"q": "paris", "n": 3}, result=[]),
        make_tool_call("search", '{"n": 3, "q": "paris"}', result=[]),  # same, as JSON text
        make_tool_call("search", {"q": "rome", "n": 3}, result=[]),
        make_tool_call("search", {"n": 3, "q": "paris"}, error="timeout"),
        make_tool_call("search", {"q": "paris", "n": 3}, result=[]),
        make_turn("answer", text="nothing found"),
    )
    results = run_metric(ToolRepetition(), session)
    assert [(r.turn_id, r.outcome.value) for r in results] == [
        ("t1", "pass"),
        ("t2", "pass"),
        ("t3", "pass"),
        ("t4", "fail"),
        ("t5", "pass"),
    ]
    assert "t1, t2" in results[3].explanation and results[3].threshold == 2
    assert "already reported at t4" in results[4].explanation


def test_limit_and_scope_are_settings() -> None:
    calls = [make_tool_call("get", {"id": 1}, context=c) for c in ("main", "sub", "main")]
    assert _outcomes(*calls) == [("t1", "pass"), ("t2", "pass"), ("t3", "pass")]
    assert _outcomes(*calls, max_repeats=1) == [("t1", "pass"), ("t2", "pass"), ("t3", "fail")]
    assert _outcomes(*calls, scope="session") == [("t1", "pass"), ("t2", "pass"), ("t3", "fail")]


def test_it_is_registered_with_its_settings_table() -> None:
    from aem.config import ConfigError, load_config
    from aem.metrics.registry import resolve_metrics

    config = load_config(overrides=["metrics.tool_repetition.max_repeats=5"])
    [metric] = [m for m in resolve_metrics(config) if m.name == "tool_repetition"]
    assert isinstance(metric, ToolRepetition) and metric.settings.max_repeats == 5
    try:
        load_config(overrides=['metrics.tool_repetition.scope="agent"'])
    except ConfigError as exc:
        assert "metrics.tool_repetition.scope" in str(exc)
    else:
        raise AssertionError("an invalid scope must fail at load")


def test_a_retry_after_a_state_changing_success_is_no_repetition() -> None:
    """Booking failed twice for want of a payment method; the agent added one, and the
    third identical booking is a retry of a changed world, not a loop."""
    refused = "no payment method on file"
    book = {"flight": "AF123"}
    fixed = _outcomes(
        make_tool_call("book_flight", book, error=refused),
        make_tool_call("book_flight", book, error=refused),
        make_tool_call("add_payment_method", {"card": "visa"}, result="ok"),
        make_tool_call("book_flight", book, result="booked"),
    )
    assert fixed == [("t1", "pass"), ("t2", "pass"), ("t3", "pass"), ("t4", "pass")]


def test_a_read_only_or_failed_call_between_does_not_reset_the_count() -> None:
    book = {"flight": "AF123"}
    for between in (
        make_tool_call("get_user_details", {"user": "ann"}, result={"cards": []}),
        make_tool_call("add_payment_method", {"card": "visa"}, error="card declined"),
    ):
        session = make_session(
            make_tool_call("book_flight", book, error="no payment method on file"),
            make_tool_call("book_flight", book, error="no payment method on file"),
            between,
            make_tool_call("book_flight", book, error="no payment method on file"),
        )
        results = run_metric(ToolRepetition(), session)
        assert [r.outcome.value for r in results] == ["pass", "pass", "pass", "fail"]
        [first, _] = results[3].evidence
        assert first.actual == book and "failed: no payment method on file" in str(first.detail)
        assert "no state-changing success between" in results[3].explanation


def test_a_repeated_state_changing_call_itself_still_loops() -> None:
    same = [make_tool_call("update_address", {"zip": "75001"}, result="ok") for _ in range(3)]
    assert _outcomes(*same) == [("t1", "pass"), ("t2", "pass"), ("t3", "fail")]
