"""What a turn saw, and which derived values it may state (``correctness.truthfulness``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind

from aem.foundation.model import MetricResult, Turn
from aem.metrics.truthfulness import Truthfulness
from aem.testing import make_session, make_tool_call, make_turn, run_metric
from scripts.generate_sample_traces import (
    GENAI_APP_SCOPE,
    Scope,
    Session,
    epoch_ns,
    fixed_resource,
    write_lines,
)
from tests.conftest import run_audit, session

CHAT = Scope("opentelemetry.instrumentation.openai_v2", "2.4b0")
TASK = "List the clients who ordered within the last 90 days and say how many there are."


def _last(*turns: Turn, **session_fields: Any) -> MetricResult:
    return run_metric(Truthfulness(), make_session(*turns, **session_fields))[-1]


def _group_chat(path: Path, answer: str, *, instructions: str | None = None) -> Path:
    """A group chat recorded with the OTel SDK: the task only on the root ``invoke_agent``
    span, each member's ``chat`` span with an empty input (as AG2 conversions have)."""
    recorded = Session("task-on-root", fixed_resource("group-chat"), epoch_ns(2026, 5, 4, 9, 0))
    root = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "group chat",
        "gen_ai.conversation.id": "chat-1",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": TASK}]}]
        ),
    }
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "chat-1",
        "gen_ai.agent.name": "Planner",
        "gen_ai.input.messages": "[]",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
        ),
    }
    if instructions is not None:
        chat["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": instructions}])
    with (
        recorded.span(GENAI_APP_SCOPE, "invoke_agent group chat", root, root=True),
        recorded.span(CHAT, "chat Planner", chat, kind=SpanKind.CLIENT),
    ):
        pass
    write_lines(path, recorded.lines())
    return path


def _answer_truthfulness(path: Path) -> dict[str, Any]:
    _, report, _ = run_audit(str(path))
    turn = session(report, "chat-1")["turns"][-1]
    return next(m for m in turn["metrics"] if m["name"] == "correctness.truthfulness")


def test_the_task_on_the_root_span_is_evidence_for_every_turn(tmp_path: Path) -> None:
    said = "I will look at orders placed within the last 90 days."
    assert _answer_truthfulness(_group_chat(tmp_path / "a.jsonl", said))["outcome"] == "pass"
    invented = "I will look at orders placed within the last 120 days."
    verdict = _answer_truthfulness(_group_chat(tmp_path / "b.jsonl", invented))
    assert verdict["outcome"] == "unverified" and "120 days" in verdict["explanation"]


def test_system_instructions_are_evidence(tmp_path: Path) -> None:
    said = "Orders above $2,500 need a manager, so I escalate this one."
    path = _group_chat(tmp_path / "c.jsonl", said, instructions="Escalate orders above $2,500.")
    assert _answer_truthfulness(path)["outcome"] == "pass"
    assert _answer_truthfulness(_group_chat(tmp_path / "d.jsonl", said))["outcome"] == "unverified"


def test_the_first_user_message_is_evidence_for_a_sub_agent() -> None:
    sub = make_turn("answer", text="Budget noted: 1,750 EUR.", context="sub")
    assert _last(sub, user_inputs=["My budget is 1,750 EUR."]).outcome == "pass"
    assert _last(sub).outcome == "unverified"


PRICES = {"flights": [{"flight": "HAT105", "price": 105}, {"flight": "HAT190", "price": 190}]}


def test_a_total_of_one_result_column_passes_and_quotes_its_derivation() -> None:
    verdict = _last(
        make_tool_call("get_reservation", {"id": "ZFA04Y"}, result=PRICES),
        make_turn("answer", text="The total price of your two flights is $295."),
    )
    assert verdict.outcome == "pass"
    assert "$295 = 105 + 190 from t1 get_reservation result 'flights.price' (total)" in (
        verdict.explanation
    )


def test_a_sum_that_the_claim_does_not_read_as_fails() -> None:
    # The same $295, stated as the price of one flight: no total is claimed.
    verdict = _last(
        make_tool_call("get_reservation", {"id": "ZFA04Y"}, result=PRICES),
        make_turn("answer", text="Flight HAT105 costs $295."),
    )
    assert verdict.outcome == "fail" and "$295" in verdict.explanation


def test_values_of_different_kinds_do_not_combine() -> None:
    # 180 EUR is 6 × 30 and 150 + 30, but the 30 is seconds of a timeout.
    verdict = _last(
        make_tool_call("get_quote", {"city": "Lisbon"}, error="timed out after 30 s"),
        make_tool_call("get_hotels", {"city": "Lisbon"}, result={"nightly_rate": "150 EUR"}),
        make_turn("answer", text="For 6 nights the total is 180 EUR."),
    )
    assert verdict.outcome == "unverified" and "180 EUR" in verdict.explanation


def test_a_balance_from_the_turns_own_amounts_and_a_count_it_states() -> None:
    assert (
        _last(
            make_tool_call("get_certificate", {"id": "C1"}, result={"balance": "$500"}),
            make_turn("answer", text="The booking is $299, leaving $201 remaining on it."),
        ).outcome
        == "pass"
    )
    verdict = _last(
        make_tool_call("get_policy", {}, result={"compensation_per_passenger": "$50"}),
        make_turn("answer", text="For 3 passengers the total compensation is $150."),
        # "3 passengers" counts something, so it is checked: the user said it
        user_inputs=["We were 3 passengers on that flight."],
    )
    assert verdict.outcome == "pass" and "3 × $50" in verdict.explanation


def test_a_calculators_intermediate_results_are_seen() -> None:
    verdict = _last(
        make_tool_call("calculate", {"expression": "364 + (210 + 370)"}, result="944.0"),
        make_turn("answer", text="The second leg costs $580 and the trip $944."),
    )
    assert verdict.outcome == "pass"


def test_a_count_is_stated_with_what_it_counts_not_a_list_number() -> None:
    """A list item's number followed by Markdown bold ("2. **SFO to SEA**") read as
    "2 ×" and let a wrong total pass as 2 × a price; "Number of passengers: 3" is a
    count the answer states."""
    policy = {"compensation_per_passenger": "$50"}
    listed = _last(
        make_tool_call("get_policy", {}, result=policy),
        make_turn("answer", text="Flights:\n1. **JFK**\n2. **SFO to SEA**\n- Total: $100"),
    )
    # No record binds a total: a wrong one is a suspect, not a proof.
    assert listed.outcome == "unverified" and "$100" in listed.explanation
    labelled = _last(
        make_tool_call("get_policy", {}, result=policy),
        make_turn("answer", text="- Number of passengers: 2\n- Total compensation: $100"),
    )
    assert labelled.outcome == "pass" and "2 × $50" in labelled.explanation


def test_a_column_total_adds_the_rows_the_answer_names() -> None:
    """A search returns many rows; any two prices add up to many wrong totals. When the
    answer names rows by their ids, only those rows' values make its total."""
    search = {
        "flights": [
            {"flight": "HAT105", "price": 105},
            {"flight": "HAT190", "price": 190},
            {"flight": "HAT230", "price": 230},
        ]
    }
    named = "You picked HAT105 and HAT190. The total price is {total}."
    right = _last(
        make_tool_call("search_flights", {"to": "SEA"}, result=search),
        make_turn("answer", text=named.format(total="$295")),
    )
    assert right.outcome == "pass", right.explanation
    other_pair = _last(
        make_tool_call("search_flights", {"to": "SEA"}, result=search),
        make_turn("answer", text=named.format(total="$335")),  # 105 + 230: not named
    )
    assert other_pair.outcome == "unverified" and "$335" in other_pair.explanation


def test_what_remains_of_a_rows_amount_after_a_stated_payment() -> None:
    """Seen on tau-bench: "the total is $299 … you will have $201 remaining" of a
    certificate whose record says ``"amount": 500`` (a JSON number, no currency)."""
    user = {"payment_methods": {"certificate_8998287": {"source": "certificate", "amount": 500}}}
    text = "The total is $299. After using your certificate you will have {left} remaining."
    right = _last(
        make_tool_call("get_user_details", {"user_id": "ivan"}, result=user),
        make_tool_call("calculate", {"expression": "158 + 141"}, result="299.0"),
        make_turn("answer", text=text.format(left="$201")),
    )
    assert right.outcome == "pass" and "500 - $299" in right.explanation
    wrong = _last(
        make_tool_call("get_user_details", {"user_id": "ivan"}, result=user),
        make_tool_call("calculate", {"expression": "158 + 141"}, result="299.0"),
        make_turn("answer", text=text.format(left="$221")),
    )
    assert wrong.outcome == "unverified" and "$221" in wrong.explanation


def test_a_payment_is_no_difference() -> None:
    """Seen in bench/support: "$275" passed as a payment because $305 − $30 (two amounts
    in view) gives it; paying states an amount, it does not compute one."""
    quote = {"total_price": "$305", "insurance": "$30"}
    text = "The total is $305. You will pay {paid} with your credit card."
    assert (
        _last(
            make_tool_call("get_quote", {"id": "Q1"}, result=quote),
            make_turn("answer", text=text.format(paid="$305")),
        ).outcome
        == "pass"
    )
    changed = _last(
        make_tool_call("get_quote", {"id": "Q1"}, result=quote),
        make_turn("answer", text=text.format(paid="$275")),
    )
    assert changed.outcome == "unverified" and "$275" in changed.explanation
