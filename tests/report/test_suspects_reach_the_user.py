"""A suspect is what reached the user: an answer (or a state-changing call's argument)
that states a value nothing supports nor contradicts. A reasoning step's unsupported
value is a doubt on that step — counted apart, never making the session a suspect one —
and the answer's own suspect is what the terminal, the JSON report and the sinks'
session item name.

Sessions are recorded with the test agent (the real OpenTelemetry SDK) and audited
through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem.cli import app
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part
from tests.conftest import run_audit

LOOKUP = '{"order_id": "A-17", "refund": 42.5, "currency": "USD", "status": "approved"}'
TRUTHFULNESS = "correctness.truthfulness"


def _agent(conversation: str, *, guess: bool, extra: str = "", thought: str = "") -> Any:
    """Looks the order up (first guessing a price in its reasoning when ``guess``), then
    answers with the refund, plus ``extra`` (an unsupported value) when given."""

    def build(recording: Any) -> None:
        spec = ToolSpec("lookup_order", "Look up an order.", {"type": "object"})
        agent = GenAIAgent(recording, conversation, "gpt-4o", [spec])
        call = ToolCall("c1", "lookup_order", {"order_id": "A-17"}, LOOKUP)
        question = [message("user", text_part("How much is my refund for order A-17?"))]
        plan = thought or "Refunds like this are usually about $95; let me check."
        with agent.invoke_agent("helpdesk", root=True):
            said = agent.chat(question, calls=[call], text=plan if guess else None)
            with agent.execute_tool(call):
                pass
            agent.chat([*question, said], text=f"Your refund for A-17 is $42.50.{extra}")

    return build


def _view(*args: str) -> str:
    result = CliRunner().invoke(app, ["audit", *args, "--no-progress"], env={"COLUMNS": "200"})
    return " ".join(result.stdout.split())


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("told")
    return {
        "doubt": record(folder / "doubt.jsonl", "doubt-1", _agent("doubt-1", guess=True)),
        "told": record(
            folder / "told.jsonl",
            "told-1",
            _agent("told-1", guess=True, extra=" Your return label number is 88123."),
        ),
    }


def test_a_reasoning_only_doubt_is_no_suspect_and_is_counted_apart(
    traces: dict[str, Path],
) -> None:
    code, report, err = run_audit(str(traces["doubt"]))
    assert code == 0, err
    [session] = report["sessions"]
    assert session["suspects"] == [] and session["root_causes"] == []
    [doubt] = session["doubts"]
    reasoning = next(t for t in session["turns"] if t["turn_id"] == doubt["turn_id"])
    assert reasoning["kind"] == "reasoning" and reasoning["label"] == "ok"
    assert TRUTHFULNESS in doubt["metrics"]
    assert report["sessions_with_suspect_only"] == 0
    assert report["sessions_with_doubts_only"] == 1
    view = _view(str(traces["doubt"]))
    assert "1 session, 0 with a root cause, 1 with doubts only" in view
    assert "suspects, ranked" not in view


def test_the_answer_with_an_unsupported_value_is_the_suspect_shown(
    traces: dict[str, Path], tmp_path: Path
) -> None:
    code, report, err = run_audit(str(traces["told"]))
    assert code == 0, err
    [session] = report["sessions"]
    answer = next(t for t in session["turns"] if t["kind"] == "answer")
    assert answer["label"] == "suspect"
    assert [s["turn_id"] for s in session["suspects"]] == [answer["turn_id"]]
    assert [d["kind"] for d in session["doubts"]] == ["reasoning"]
    assert report["sessions_with_suspect_only"] == 1
    view = _view(str(traces["told"]))
    assert f"{answer['turn_id']} suspect {TRUTHFULNESS}: states '88123'" in view
    # The sinks' session item names the answer's suspect.
    verdicts = tmp_path / "verdicts.jsonl"
    written = run_audit(
        str(traces["told"]), "--set", f"sinks.jsonl.path={verdicts}", "--sink", "jsonl"
    )
    assert written[0] == 0, written[2]
    with verdicts.open(encoding="utf-8") as lines:
        [item] = [row for row in map(json.loads, lines) if row["kind"] == "session"]
    assert item["label"] == "suspect"
    assert f"the answer turn {answer['turn_id']}" in item["explanation"]
    # The HTML page lists it as the session's suspect, its row in the suspect colour.
    page_path = tmp_path / "report.html"
    CliRunner().invoke(
        app, ["audit", str(traces["told"]), "--no-progress", "--html", str(page_path)]
    )
    page = page_path.read_text(encoding="utf-8")
    data = json.loads(page.split('id="aem-data">', 1)[1].split("</script>", 1)[0])
    [entry] = data["sessions"]
    assert [s[0] for s in entry["suspects"]] == [answer["turn_id"]]


def test_a_reasoning_doubt_the_answer_repeats_is_a_suspect(tmp_path: Path) -> None:
    """The plan guesses a delay of 14 days and the answer tells the user so: the plan's
    value reached the user, so the plan is a suspect, not a doubt."""
    thought = "Such refunds usually arrive within 14 days; let me check the order."
    trace = record(
        tmp_path / "repeat.jsonl",
        "repeat-1",
        _agent("repeat-1", guess=True, thought=thought, extra=" It arrives within 14 days."),
    )
    code, report, err = run_audit(str(trace))
    assert code == 0, err
    [session] = report["sessions"]
    kinds = {t["turn_id"]: t["kind"] for t in session["turns"]}
    assert sorted(kinds[s["turn_id"]] for s in session["suspects"]) == ["answer", "reasoning"]
    assert session["doubts"] == [] and report["sessions_with_doubts_only"] == 0
