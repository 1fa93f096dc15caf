"""Recovery means the same intent succeeded; blame the failed attempt, not the honest
answer; a session with no turn at all still gets its verdict (traces from the real SDK)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scripts.generate_sample_traces import Session
from tests.agent_kit import (
    GenAIAgent,
    ToolCall,
    ToolSpec,
    message,
    record,
    text_part,
    tool_messages,
    write_cases,
)
from tests.conftest import run_audit, session

QUOTE = ToolSpec("get_quote", "A freight quote from one carrier.", {"type": "object"})
BOOK = ToolSpec("book_flight", "Book a flight.", {"type": "object"})


def _retrying_agent(
    conversation: str,
    first: ToolCall,
    retry: ToolCall,
    answer: str,
    tool: ToolSpec = QUOTE,
    ask: str = "Get me a quote from ACME for 2026-03-01.",
):
    """The agent calls, sees the failure, calls again, answers."""

    def build(recording: Session) -> None:
        agent = GenAIAgent(recording, conversation, "gpt-4o", [tool])
        question = [message("user", text_part(ask))]
        with agent.invoke_agent("broker", root=True):
            said = agent.chat(question, calls=[first])
            with agent.execute_tool(first):
                pass
            again = agent.chat([*question, said, *tool_messages([first])], calls=[retry])
            with agent.execute_tool(retry):
                pass
            agent.chat([*question, said, again, *tool_messages([retry])], text=answer)

    return build


def _tool_execution(report: dict[str, Any], sid: str, turn_id: str) -> dict[str, Any]:
    turn = next(t for t in session(report, sid)["turns"] if t["turn_id"] == turn_id)
    return next(m for m in turn["metrics"] if m["name"] == "tool_execution")


def test_a_quote_from_another_carrier_does_not_recover_the_failed_one(tmp_path: Path) -> None:
    failed = ToolCall(
        "c1",
        "get_quote",
        {"carrier": "ACME", "date": "2026-03-01"},
        "",
        TimeoutError("upstream timed out after 30 s"),
    )
    other = ToolCall("c2", "get_quote", {"carrier": "BOLT", "date": "2026-03-01"}, "120")
    path = record(
        tmp_path / "t.jsonl",
        "q-other",
        _retrying_agent("q-other", failed, other, "ACME is down; BOLT quotes 120."),
    )
    _, report, _ = run_audit(str(path))
    verdict = _tool_execution(report, "q-other", "t1")
    assert verdict["outcome"] == "fail" and "recovered" not in verdict["explanation"]
    assert session(report, "q-other")["root_causes"][0]["turn_id"] == "t1"


def test_a_renamed_retry_fixing_the_argument_the_error_names_recovers(tmp_path: Path) -> None:
    failed = ToolCall(
        "c1",
        "get_quote",
        {"carrier": "ACME", "date": "2026-02-30"},
        "",
        ValueError("date 2026-02-30 is not a valid date"),
    )
    # The same tool under a chat-template channel suffix, the date corrected.
    retry = ToolCall(
        "c2", "get_quote<|channel|>commentary", {"carrier": "ACME", "date": "2026-03-01"}, "95"
    )
    path = record(
        tmp_path / "t.jsonl", "q-retry", _retrying_agent("q-retry", failed, retry, "ACME: 95.")
    )
    _, report, _ = run_audit(str(path))
    verdict = _tool_execution(report, "q-retry", "t1")
    assert verdict["outcome"] == "pass" and "recovered by t2" in verdict["explanation"]


def _failed_booking(recording: Session) -> None:
    agent = GenAIAgent(recording, "book-1", "gpt-4o", [BOOK])
    question = [message("user", text_part("Book flight AF123 for me."))]
    call = ToolCall("c1", "book_flight", {"flight": "AF123"}, "", ConnectionError("booking down"))
    with agent.invoke_agent("travel", root=True):
        said = agent.chat(question, calls=[call])
        with agent.execute_tool(call):
            pass
        agent.chat(
            [*question, said, *tool_messages([call])],
            text="Sorry, I could not book AF123: the booking service is down.",
        )


def _expecting_a_booking(
    tmp_path: Path, sid: str, build: Callable[[Session], None]
) -> tuple[int, dict[str, Any]]:
    """Record ``build`` as session ``sid`` and audit it with a case expecting a booking."""
    path = record(tmp_path / "t.jsonl", sid, build)
    expected = [{"name": "book_flight", "arguments": {"flight": "AF123"}}]
    cases = write_cases(
        tmp_path / "cases.jsonl", {"session_id": sid, "expected_tool_calls": expected}
    )
    code, report, _ = run_audit(str(path), "--cases", str(cases))
    return code, session(report, sid)


def test_the_failed_attempt_is_the_root_cause_not_the_honest_answer(tmp_path: Path) -> None:
    code, booked = _expecting_a_booking(tmp_path, "book-1", _failed_booking)
    [cause] = booked["root_causes"]
    assert cause["turn_id"] == "t1" and cause["metrics"][:2] == ["tool_execution", "tool_choice"]
    attempt = booked["turns"][0]
    [choice] = [m for m in attempt["metrics"] if m["name"] == "tool_choice"]
    assert "attempted here and rejected" in choice["explanation"] and code == 1
    answer = booked["turns"][-1]
    assert answer["label"] != "root_cause"
    assert not any(m["name"] == "tool_choice" and m["outcome"] == "fail" for m in answer["metrics"])


def test_a_session_without_a_single_turn_gets_a_session_level_verdict(tmp_path: Path) -> None:
    def build(recording: Session) -> None:
        agent = GenAIAgent(recording, "silent-1", "gpt-4o", [BOOK])
        with agent.invoke_agent("travel", root=True):
            pass  # the agent never reached a model call

    code, silent = _expecting_a_booking(tmp_path, "silent-1", build)
    [turn] = silent["turns"]
    assert turn["kind"] == "session" and turn["label"] == "root_cause" and code == 1
    assert turn["span_ids"] == [s for s in silent["root_causes"][0]["span_ids"]]
    [choice] = [m for m in turn["metrics"] if m["name"] == "tool_choice"]
    assert choice["outcome"] == "fail" and "book_flight" in choice["explanation"]
    # Without a case expecting calls, no session turn is invented.
    _, plain, _ = run_audit(str(tmp_path / "t.jsonl"))
    assert session(plain, "silent-1")["turns"] == []


def _booking_then_another(answer: str) -> Callable[[Session], None]:
    """AF123 fails, AF999 is booked instead, and the agent answers ``answer``."""
    failed = ToolCall("c1", "book_flight", {"flight": "AF123"}, "", ConnectionError("booking down"))
    other = ToolCall("c2", "book_flight", {"flight": "AF999"}, '{"booking": "B-7"}')
    ask = "Book flight AF123, or AF999 if it fails."
    return _retrying_agent("book-2", failed, other, answer, BOOK, ask)


def test_tool_execution_and_claimed_success_share_one_recovery_rule(tmp_path: Path) -> None:
    path = record(tmp_path / "t.jsonl", "book-2", _booking_then_another("I booked AF123."))
    _, report, _ = run_audit(str(path))
    assert _tool_execution(report, "book-2", "t1")["outcome"] == "fail"
    answer = session(report, "book-2")["turns"][-1]
    [truth] = [m for m in answer["metrics"] if m["name"] == "correctness.truthfulness"]
    assert truth["outcome"] == "fail" and "t1 book_flight failed" in truth["explanation"]

    honest = _booking_then_another("AF123 is down, so I booked AF999 instead.")
    path = record(tmp_path / "h.jsonl", "book-2", honest)
    _, report, _ = run_audit(str(path))
    answer = session(report, "book-2")["turns"][-1]
    [truth] = [m for m in answer["metrics"] if m["name"] == "correctness.truthfulness"]
    assert truth["outcome"] == "pass", truth["explanation"]


# --- the error is read: transient vs about an argument (generated sessions) -------------

TRANSIENT = [
    "upstream timed out after 30 s",
    "HTTP 503 Service Unavailable",
    "429 Too Many Requests: rate limit exceeded",
    "connection reset by peer",
    "Превышено время ожидания ответа",
    "Сервис временно недоступен, повторите попытку позже",
]
ABOUT_AN_ARGUMENT = [
    "date 2026-02-30 is not a valid date",
    "carrier ACME not found",
    "carrier not allowed on this route",
    "syntax error near ACME",
    "Неверный перевозчик ACME",
    "Перевозчик ACME не найден",
]


def _quote_then(error: str, retry: dict[str, Any]) -> list[Any]:
    """A quote that failed with ``error``, the retry ``retry`` that succeeded, the results
    of ``tool_execution`` on them."""
    from aem.metrics.tool_execution import ToolExecution
    from aem.testing import make_session, make_tool_call, make_turn, run_metric

    first = {"carrier": "ACME", "date": "2026-02-30"}
    turns = make_session(
        make_tool_call("get_quote", first, error=error),
        make_tool_call("get_quote", retry, result={"price": 95}),
        make_turn("answer", text="The quote is 95."),
    )
    return run_metric(ToolExecution(), turns)


@pytest.mark.parametrize("error", TRANSIENT + ABOUT_AN_ARGUMENT)
def test_the_error_is_classified(error: str) -> None:
    from aem.evidence.recovery import ErrorKind, error_kind

    expected = ErrorKind.TRANSIENT if error in TRANSIENT else ErrorKind.ARGUMENT
    assert error_kind(error) is expected


@pytest.mark.parametrize("error", TRANSIENT)
def test_a_transient_error_is_not_recovered_by_other_arguments(error: str) -> None:
    other = _quote_then(error, {"carrier": "BOLT", "date": "2026-02-30"})
    assert other[0].outcome.value == "fail" and "recovered" not in other[0].explanation
    [quoted] = other[0].evidence
    assert quoted.actual == error and "transient error of get_quote(" in str(quoted.detail)
    same = _quote_then(error, {"carrier": "ACME", "date": "2026-02-30"})
    assert same[0].outcome.value == "pass" and "recovered by t2" in same[0].explanation


@pytest.mark.parametrize("error", ABOUT_AN_ARGUMENT)
def test_an_argument_error_is_recovered_by_changing_the_named_argument(error: str) -> None:
    named = "date" if "date" in error else "carrier"
    retry = {"carrier": "ACME", "date": "2026-02-30", named: "CHANGED"}
    fixed = _quote_then(error, retry)
    assert fixed[0].outcome.value == "pass" and "recovered by t2" in fixed[0].explanation
    unnamed = "carrier" if named == "date" else "date"
    other = _quote_then(error, {"carrier": "ACME", "date": "2026-02-30", unnamed: "CHANGED"})
    assert other[0].outcome.value == "fail", "changing what the error does not name is no fix"
    assert "argument error of get_quote(" in str(other[0].evidence[0].detail)


@pytest.mark.parametrize(
    ("arguments", "error", "fixed"),
    [
        # a fragment of the value: payment_id = certificate_…
        (
            {"payment_id": "certificate_9312", "user_id": "ann_7"},
            "certificate cannot be used for this reservation",
            "payment_id",
        ),
        # the kind of the values: origin and destination are airports
        (
            {"origin": "JFK", "destination": "SEA", "user_id": "ann_7"},
            "no route for the given airports",
            "origin",
        ),
        (
            {"origin": "JFK", "destination": "SEA", "user_id": "ann_7"},
            "Маршрут между аэропортами не найден",
            "destination",
        ),
    ],
    ids=["value-fragment", "kind-en", "kind-ru"],
)
def test_an_argument_named_by_a_fragment_or_kind_is_the_fix(
    arguments: dict[str, Any], error: str, fixed: str
) -> None:
    from aem.evidence.recovery import named_arguments
    from aem.metrics.tool_execution import ToolExecution
    from aem.testing import make_session, make_tool_call, run_metric

    assert fixed in named_arguments(arguments, error) and "user_id" not in named_arguments(
        arguments, error
    )
    session = make_session(
        make_tool_call("book", arguments, error=error),
        make_tool_call("book", {**arguments, fixed: "OTHER"}, result="booked"),
    )
    [failed, _] = run_metric(ToolExecution(), session)
    assert failed.outcome.value == "pass" and "recovered by t2" in failed.explanation
    session = make_session(
        make_tool_call("book", arguments, error=error),
        make_tool_call("book", {**arguments, "user_id": "bob_1"}, result="booked"),
    )
    [failed, _] = run_metric(ToolExecution(), session)
    assert failed.outcome.value == "fail"


def test_a_traceback_quoting_the_code_does_not_name_the_code_argument() -> None:
    """Words of a text value (code, a query) are not its name: a traceback that quotes
    the code says which line broke, not that another program is the same intent."""
    from aem.evidence.recovery import named_arguments

    code = {"code": "rows = load_rows()\nprint(result)"}
    assert named_arguments(code, "NameError: name 'result' is not defined") == set()
    assert named_arguments({"payment_id": "gift_card_7"}, "gift card balance too low") == {
        "payment_id"
    }


# --- the world declines, the agent tells the user ----------------------------------------

SEATS = {"flight": "QX451", "date": "2026-05-20", "cabin": "economy"}


def _declined(error: str, *after: Any) -> list[Any]:
    """``tool_execution`` on a booking the world declined with ``error``, then ``after``."""
    from aem.metrics.tool_execution import ToolExecution
    from aem.testing import make_session, make_tool_call, run_metric

    session = make_session(make_tool_call("book_seat", SEATS, error=error), *after)
    return run_metric(ToolExecution(), session)


@pytest.mark.parametrize(
    ("error", "told"),
    [
        ("not enough seats on flight QX451", "Sorry, there aren't enough seats on QX451."),
        ("flight QX451 not available on date 2026-05-20", "QX451 is not available that day."),
        ("sold out", "Unfortunately that fare is sold out; shall I look at another date?"),
        ("Недостаточно мест на рейсе QX451", "К сожалению, на рейсе QX451 нет мест."),
    ],
    ids=["seats", "date", "sold-out", "ru"],
)
def test_a_decline_of_the_world_told_to_the_user_is_no_failure(error: str, told: str) -> None:
    from aem.testing import make_turn

    [verdict] = _declined(error, make_turn("answer", text=told))
    assert verdict.outcome.value == "pass", verdict.explanation
    assert "t2 told the user" in verdict.explanation
    assert [e.span_id for e in verdict.evidence][1] is not None


def test_a_decline_asked_again_or_kept_from_the_user_fails() -> None:
    from aem.testing import make_tool_call, make_turn

    error = "not enough seats on flight QX451"
    told = make_turn("answer", text="There are no seats left on QX451.")
    again = _declined(error, told, make_tool_call("book_seat", SEATS, error=error))
    assert again[0].outcome.value == "fail", "asking again what the world refused is no report"
    silent = _declined(error, make_turn("answer", text="Your trip is all set for May 20."))
    assert silent[0].outcome.value == "fail", "an answer that does not say it hides it"
    # An error about the call itself stays the agent's, told or not.
    invalid = _declined("flight QX451 is not a valid flight", told)
    assert invalid[0].outcome.value == "fail"
