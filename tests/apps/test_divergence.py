"""Two runs of one task: the first divergent turn, and what is downstream of it.

Pairs are generated with one injected change each (a different argument, a skipped call,
an extra call, a different agent, an early end) and must name the changed turn; changes
that are not a different path (calls of one decision reordered, an argument written
another way, other model text) must find no divergence. The CLI is driven on traces
recorded with the real OpenTelemetry SDK.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem import testing as t
from aem.cli import app
from aem.foundation.model import Session, Turn
from aem.runs.divergence import diverge_runs, diverge_sessions
from tests.agent_kit import (
    GenAIAgent,
    ToolCall,
    ToolSpec,
    message,
    record,
    text_part,
    tool_messages,
)


def _model(
    text: str = "thinking",
    name: str = "gpt-4o",
    model_span: str = "m",
    *,
    history: str | None = None,
    reads: tuple[str, ...] = (),
) -> Turn:
    """A reasoning turn of model call ``model_span``, whose input held model call
    ``history``'s output and the results of the calls ``reads`` names (the link keys the
    collectors put on a recorded turn, from which the turn graph is built)."""
    return t.make_turn("reasoning", name, text=text).model_copy(
        update={
            "model_span_id": model_span,
            "history_from": history,
            "consumes_call_ids": list(reads),
        }
    )


def _call(
    name: str, args: dict[str, Any], model_span: str = "m", *, history: str | None = None
) -> Turn:
    turn = t.make_tool_call(name, args, result={"ok": True})
    assert turn.tool_call is not None
    call = turn.tool_call.model_copy(update={"call_id": f"{model_span}-{name}"})
    return turn.model_copy(
        update={"model_span_id": model_span, "tool_call": call, "history_from": history}
    )


def _run(*turns: Turn, session_id: str = "s1", question: str = "Book me a flight") -> Session:
    """A session whose turn graph is read from its turns' link keys, as a recorded one's."""
    session = t.make_session(*turns, session_id=session_id, user_inputs=[question])
    session.stated_edges = None
    return session


def _baseline() -> list[Turn]:
    """Three decisions, then the answer; each model call read the previous one's output
    (history) and the results of its calls."""
    return [
        _model(model_span="m1"),
        _call("search_flights", {"from": "SFO", "to": "JFK"}, "m1"),
        _model(model_span="m2", history="m1", reads=("m1-search_flights",)),
        _call("get_price", {"flight": "UA-100"}, "m2", history="m1"),
        _call("get_seats", {"flight": "UA-100"}, "m2", history="m1"),
        _model(model_span="m3", history="m2", reads=("m2-get_price", "m2-get_seats")),
        _call("book", {"flight": "UA-100", "seat": "12A"}, "m3", history="m2"),
        t.make_turn("answer", text="Booked UA-100, seat 12A.").model_copy(
            update={"model_span_id": "m4", "history_from": "m3", "consumes_call_ids": ["m3-book"]}
        ),
    ]


def test_identical_runs_do_not_diverge() -> None:
    found = diverge_sessions(_run(*_baseline()), _run(*_baseline()))
    assert not found.diverged and found.first is None and found.downstream == []
    assert found.same_steps == 7


def test_a_different_argument_names_the_call_and_everything_after_is_downstream() -> None:
    changed = _baseline()
    changed[6] = _call("book", {"flight": "UA-100", "seat": "14C"}, "m3", history="m2")
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None
    assert (found.first.before_turn_id, found.first.after_turn_id) == ("t7", "t7")
    assert "seat" in found.first.reason and "14C" in found.first.reason
    assert found.downstream == ["t8"]


def test_a_skipped_call_in_a_parallel_block_is_named() -> None:
    changed = [turn for i, turn in enumerate(_baseline()) if i != 4]  # no get_seats
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None
    assert found.first.before_turn_id == "t5"  # the get_seats the earlier run made
    assert "get_seats" in found.first.reason and "not called" in found.first.reason
    assert found.same_steps == 3


def test_a_skipped_decision_names_the_turn_that_took_its_place() -> None:
    changed = [turn for i, turn in enumerate(_baseline()) if i not in (5, 6)]  # no booking
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None
    assert found.first.after_turn_id == "t6"  # the answer, where a model turn was before
    assert found.downstream == []


def test_an_extra_call_is_named() -> None:
    changed = _baseline()
    changed.insert(2, _call("get_weather", {"city": "NYC"}, "m1"))
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None
    assert found.first.after_turn_id == "t3" and found.first.before_turn_id is None
    assert "get_weather" in found.first.reason
    assert found.downstream == [f"t{i}" for i in range(4, 10)]


def test_downstream_follows_what_consumed_the_divergent_call_not_turn_order() -> None:
    """get_price changed; get_seats, made in the same decision after it, never read its
    result: not downstream. The model call that read both results, and all it led to, is."""
    changed = _baseline()
    changed[3] = _call("get_price", {"flight": "DL-200"}, "m2", history="m1")
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None and found.first.after_turn_id == "t4"
    assert found.first.step == 4  # counted from 1: model, search, model, then this block
    assert found.downstream == ["t6", "t7", "t8"]
    assert "t5" not in found.downstream


def test_steps_are_counted_from_one() -> None:
    changed = _baseline()
    changed[1] = _call("search_flights", {"from": "SFO", "to": "BOS"}, "m1")
    found = diverge_sessions(_run(*_baseline()), _run(*changed))
    assert found.first is not None and found.first.step == 2 and found.same_steps == 1
    base = _baseline()
    ended = diverge_sessions(_run(*base[:6]), _run(*base))
    assert ended.first is not None and ended.first.step == ended.same_steps + 1 == 6


def test_calls_of_one_decision_in_another_order_are_no_divergence() -> None:
    swapped = _baseline()
    swapped[3], swapped[4] = swapped[4], swapped[3]
    assert not diverge_sessions(_run(*_baseline()), _run(*swapped)).diverged


def test_the_same_calls_in_two_decisions_reordered_is_a_divergence() -> None:
    """Order across decisions is a different path: the second call saw the first's result."""
    before = _run(_model(model_span="a"), _call("f", {}, "a"), _model(model_span="b"),
                  _call("g", {}, "b"))  # fmt: skip
    after = _run(_model(model_span="a"), _call("g", {}, "a"), _model(model_span="b"),
                 _call("f", {}, "b"))  # fmt: skip
    found = diverge_sessions(before, after)
    assert found.first is not None and found.first.after_turn_id == "t2"


def test_arguments_are_compared_as_values_and_model_text_is_not_compared() -> None:
    before = _run(_model("Let me look it up."), _call("get_order", {"id": "ORD-0042"}))
    after = _run(_model("I'll check the order."), _call("get_order", {"id": "ord 42"}))
    assert not diverge_sessions(before, after).diverged


def test_a_different_sub_agent_is_a_divergence() -> None:
    before = _run(t.make_turn("agent", "researcher"), t.make_turn("answer", text="x"))
    after = _run(t.make_turn("agent", "coder"), t.make_turn("answer", text="x"))
    found = diverge_sessions(before, after)
    assert found.first is not None and "coder" in found.first.reason


def test_a_run_that_goes_on_longer_diverges_where_the_earlier_ended() -> None:
    base = _baseline()
    found = diverge_sessions(_run(*base[:6]), _run(*base))
    assert found.first is not None
    assert found.first.after_turn_id == "t7" and found.first.before_turn_id is None
    assert found.downstream == ["t8"]


def test_runs_pair_by_session_id_else_first_user_message_never_by_guess() -> None:
    before = [
        _run(*_baseline(), session_id="a1", question="Book me a flight"),
        _run(*_baseline(), session_id="same", question="x"),
        _run(*_baseline(), session_id="dup1", question="twice"),
        _run(*_baseline(), session_id="dup2", question="twice"),
    ]
    after = [
        _run(*_baseline(), session_id="b1", question="  book ME a   flight "),
        _run(*_baseline(), session_id="same", question="something else"),
        _run(*_baseline(), session_id="dup3", question="twice"),
    ]
    result = diverge_runs(before, after)
    pairs = {(s.before_session, s.after_session, s.paired_by) for s in result.sessions}
    assert pairs == {("same", "same", "session_id"), ("a1", "b1", "first_user_message")}
    assert result.only_before == ["dup1", "dup2"] and result.only_after == ["dup3"]


# ---- through the CLI, on recorded traces ------------------------------------------------


def _agent(conversation: str, seat: str) -> Any:
    def build(recording: Any) -> None:
        specs = [ToolSpec(n, n, {"type": "object"}) for n in ("find_flight", "book")]
        agent = GenAIAgent(recording, conversation, "gpt-4o", specs)
        find = ToolCall("c1", "find_flight", {"to": "JFK"}, '{"flight": "UA-100"}')
        book = ToolCall("c2", "book", {"flight": "UA-100", "seat": seat}, '{"booked": true}')
        question = [message("user", text_part("Book me a flight to JFK"))]
        with agent.invoke_agent("travel", root=True):
            first = agent.chat(question, calls=[find])
            with agent.execute_tool(find):
                pass
            second = agent.chat([*question, first], calls=[book])
            with agent.execute_tool(book):
                pass
            agent.chat([*question, first, second], text=f"Booked seat {seat}.")

    return build


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    record(tmp_path / "before.jsonl", "r1", _agent("run-1", "12A"))
    record(tmp_path / "same.jsonl", "r2", _agent("run-2", "12A"))
    record(tmp_path / "after.jsonl", "r3", _agent("run-3", "14C"))
    return tmp_path / "before.jsonl", tmp_path / "same.jsonl", tmp_path / "after.jsonl"


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["diverge", *args], env={"COLUMNS": "200"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def test_cli_names_the_divergent_book_call_in_json_and_exits_1(
    runs: tuple[Path, Path, Path],
) -> None:
    before, _, after = runs
    code, out = _cli(str(before), str(after), "--json")
    assert code == 1
    result = json.loads(out)
    (session,) = result["sessions"]
    assert session["paired_by"] == "first_user_message" and session["diverged"] is True
    assert "book" in session["first"]["reason"] and "14C" in session["first"]["reason"]
    assert len(session["downstream"]) >= 1  # the answer that followed


def _fan_out(conversation: str, hotel_city: str) -> Any:
    """One decision makes two calls at once (a hotel search, then a car search); the next
    model call reads both results and answers."""

    def build(recording: Any) -> None:
        specs = [ToolSpec(n, n, {"type": "object"}) for n in ("find_hotel", "find_car")]
        agent = GenAIAgent(recording, conversation, "gpt-4o", specs)
        hotel = ToolCall("c1", "find_hotel", {"city": hotel_city}, '{"hotel": "Inn-77"}')
        car = ToolCall("c2", "find_car", {"city": "Boston"}, '{"car": "Car-9"}')
        question = [message("user", text_part("A hotel and a car in Boston, please"))]
        with agent.invoke_agent("travel", root=True):
            first = agent.chat(question, calls=[hotel, car])
            for call in (hotel, car):
                with agent.execute_tool(call):
                    pass
            agent.chat([*question, first, *tool_messages([hotel, car])], text="Inn-77, Car-9.")

    return build


def test_cli_json_and_table_number_the_step_alike_and_downstream_follows_the_graph(
    tmp_path: Path,
) -> None:
    """The hotel search changed; the car search, made in the same decision right after
    it, never read its result: only the answer that read it is downstream."""
    before = record(tmp_path / "before.jsonl", "f1", _fan_out("run-1", "Boston"))
    after = record(tmp_path / "after.jsonl", "f2", _fan_out("run-2", "Cambridge"))
    code, out = _cli(str(before), str(after), "--json")
    assert code == 1
    (session,) = json.loads(out)["sessions"]
    first = session["first"]
    assert "find_hotel" in first["reason"] and "Cambridge" in first["reason"]
    step = first["step"]
    assert step == session["same_steps"] + 1 >= 1  # counted from 1, as people count
    code, table = _cli(str(before), str(after))
    row = next(line for line in table.splitlines() if first["after_turn_id"] in line)
    assert re.search(rf"│\s*{step}\s*│", row), row  # the terminal's step column says the same
    turns = {t["turn_id"]: t for t in _audited_turns(after)}
    car = next(i for i, t in turns.items() if t["name"] == "find_car")
    answer = next(i for i, t in turns.items() if t["kind"] == "answer")
    assert car not in session["downstream"]  # a sibling: later in order, never read it
    assert answer in session["downstream"]


def _audited_turns(path: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["audit", str(path), "--json", "--no-progress"])
    return [turn for s in json.loads(result.stdout)["sessions"] for turn in s["turns"]]


def test_cli_on_two_runs_alike_says_no_divergence_and_exits_0(
    runs: tuple[Path, Path, Path],
) -> None:
    before, same, _ = runs
    code, out = _cli(str(before), str(same))
    assert code == 0 and "no divergence" in out


def test_cli_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    code, _ = _cli(str(tmp_path / "nope"), str(tmp_path / "nope2"))
    assert code == 2


def test_cli_writes_the_compare_page_with_the_divergence_first(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    before, _, after = runs
    page = tmp_path / "compare.html"
    code, _ = _cli(str(before), str(after), "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 1
    section = html[html.index('id="divergence"') :]
    assert "run-1 → run-3" in section and "14C" in section
    _, out = _cli(str(before), str(after), "--json")
    step = json.loads(out)["sessions"][0]["first"]["step"]
    assert f'<td class="num">{step}</td>' in section  # the page numbers it as --json does
    assert html.index('id="divergence"') < html.index('id="ranking"')


@pytest.mark.parametrize("side", ["before", "after"])
def test_cli_an_empty_or_unreadable_run_is_exit_2_not_no_divergence(
    runs: tuple[Path, Path, Path], tmp_path: Path, side: str
) -> None:
    """Was: /dev/null or a file of one unreadable line exited 0, "no divergence"."""
    before, same, _ = runs
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{" + "x" * 1000 + "\n")
    for nothing in (Path("/dev/null"), broken):
        pair = (nothing, same) if side == "before" else (before, nothing)
        result = CliRunner().invoke(app, ["diverge", *map(str, pair)], env={"COLUMNS": "200"})
        assert result.exit_code == 2, result.stdout
        assert "no session could be read" in result.stderr and str(nothing) in result.stderr
        assert "no divergence" not in result.stdout


def _block(calls: int, *, changed: int | None = None) -> Session:
    turns = [_model(model_span="m1")]
    for n in range(calls):
        city = "Oslo" if n == changed else f"city-{n}"
        turns.append(_call("weather", {"city": city, "day": n % 7}, "m1"))
    turns.append(t.make_turn("answer", text="done"))
    return _run(*turns)


def test_a_parallel_block_of_3000_calls_is_matched_by_hash_then_by_value() -> None:
    """Was: 3,000 parallel calls, killed at 338 s and 3 GB (every call compared with every
    call); identical calls are now paired by hashing and only the rest value by value."""
    shuffled = _block(3000)
    turns = list(shuffled.turns)
    turns[1:-1] = list(reversed(turns[1:-1]))  # one decision: order does not count
    same = diverge_sessions(_block(3000), _run(*[tu.model_copy() for tu in turns]))
    assert not same.diverged
    found = diverge_sessions(_block(3000), _block(3000, changed=1234))
    assert found.first is not None and found.first.after_turn_id == "t1236"
    assert "weather(city='Oslo', day=2) called with other arguments" in found.first.reason


def test_a_block_too_different_to_compare_value_by_value_says_so() -> None:
    before = _block(500)
    calls = [_call("weather", {"city": f"other-{n}"}, "m1") for n in range(500)]
    after = _run(_model(model_span="m1"), *calls, t.make_turn("answer", text="done"))
    found = diverge_sessions(before, after)
    assert found.first is not None
    assert "more than 200 to compare value by value (MAX_VALUE_MATCHED)" in found.first.reason
