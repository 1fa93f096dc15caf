"""Suspects where users look: a turn that states a value the trace neither supports nor
contradicts is labelled ``suspect`` and shown apart from root causes — in the JSON report,
the terminal view (its own colour, a line, a legend entry, a ranking, the summary count),
the HTML page (its own section and colour) and every sink's turn label.

Sessions are recorded with the test agent (the real OpenTelemetry SDK) and audited
through the CLI, so each check reads what a user reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.sinks.mlflow import feedback
from aem.sinks.phoenix import annotation
from aem.sinks.records import OutboxItem, label_explanation
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part
from tests.conftest import run_audit

# The answer states an amount; the only tool result says nothing of any amount.
STATED = "Your refund is $417."
LOOKUP = '{"status": "delivered", "carrier": "UPS"}'
TRUTHFULNESS = "correctness.truthfulness"


def _refund_agent(conversation: str, *, error: BaseException | None = None) -> Any:
    """A help-desk agent that looks the order up, then answers with an amount (or, when
    the lookup fails, says it could not look it up)."""

    def build(recording: Any) -> None:
        spec = ToolSpec("lookup_order", "Look up an order.", {"type": "object"})
        agent = GenAIAgent(recording, conversation, "gpt-4o", [spec])
        call = ToolCall("c1", "lookup_order", {"order_id": "A-17"}, LOOKUP, error)
        question = [message("user", text_part("How much is my refund for order A-17?"))]
        with agent.invoke_agent("helpdesk", root=True):
            said = agent.chat(question, calls=[call])
            with agent.execute_tool(call):
                pass
            answer = "I could not look your order up." if error else STATED
            agent.chat([*question, said], text=answer)

    return build


def _suspect_trace(folder: Path, conversation: str = "refund-1") -> Path:
    return record(folder / f"{conversation}.jsonl", conversation, _refund_agent(conversation))


def _view(*args: str) -> tuple[int, str]:
    """``aem audit ARGS`` as a person sees it (wide enough that no line folds)."""
    result = CliRunner().invoke(app, ["audit", *args, "--no-progress"], env={"COLUMNS": "200"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def suspect_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One suspect session audited once for the JSON report and once for the view."""
    trace = _suspect_trace(tmp_path_factory.mktemp("suspect"))
    code, report, err = run_audit(str(trace))
    view_code, view = _view(str(trace))
    return {"trace": trace, "code": code, "report": report, "err": err, "view": (view_code, view)}


def test_the_json_report_labels_the_turn_suspect_ranks_it_apart_and_exits_0(
    suspect_run: dict[str, Any],
) -> None:
    report = suspect_run["report"]
    assert suspect_run["code"] == 0, suspect_run["err"]
    [session] = report["sessions"]
    answer = next(t for t in session["turns"] if t["kind"] == "answer")
    truth = next(m for m in answer["metrics"] if m["name"] == TRUTHFULNESS)
    assert truth["outcome"] == "unverified", truth["explanation"]
    assert answer["label"] == "suspect"
    assert session["root_causes"] == [] and report["ranking"] == []
    [suspect] = session["suspects"]
    assert suspect["turn_id"] == answer["turn_id"] and TRUTHFULNESS in suspect["metrics"]
    ranked = {r["metric"]: r for r in report["suspects"]}
    assert ranked[TRUTHFULNESS]["sessions"] == 1
    assert ranked[TRUTHFULNESS]["examples"][0]["turn_id"] == answer["turn_id"]
    assert report["sessions_with_root_cause"] == 0
    assert report["sessions_with_suspect_only"] == 1
    assert report["unsupported"] == "suspect"


def test_the_terminal_shows_the_suspect_its_reason_legend_ranking_and_count(
    suspect_run: dict[str, Any],
) -> None:
    code, view = suspect_run["view"]
    assert code == 0
    turn = suspect_run["report"]["sessions"][0]["suspects"][0]["turn_id"]
    row = next(line for line in view.splitlines() if line.startswith(f"│ {turn} "))
    assert "│ suspect │" in row and f"{TRUTHFULNESS} ?" in row
    assert f"  {turn} suspect {TRUTHFULNESS}: states '$417'" in view
    legend = next(line for line in view.splitlines() if "suspect  nothing proven" in line)
    assert legend.strip().endswith(
        "nothing proven; a value the trace neither supports nor contradicts: look here first"
    )
    ranking = view.index("suspects, ranked by sessions hit")
    assert view.index("root causes: none") < ranking  # stated, then the suspects
    assert re.search(rf"│ 1 │ 1 of 1 +│ {re.escape(TRUTHFULNESS)} ", view[ranking:])
    assert "1 session, 0 with a root cause, 1 with suspects only" in _flat(view)
    assert "unsupported = fail" not in view  # the default goes unsaid


def test_the_suspect_label_has_its_own_colour(suspect_run: dict[str, Any]) -> None:
    """Colour on: the label is magenta, the red and green of verdicts are not used."""
    result = CliRunner().invoke(
        app,
        ["audit", str(suspect_run["trace"]), "--no-progress"],
        env={"COLUMNS": "200", "FORCE_COLOR": "1", "TERM": "xterm-256color"},
        color=True,
    )
    row = next(line for line in result.stdout.splitlines() if "t2" in line and "│" in line)
    [codes] = re.findall(r"\x1b\[([0-9;]+)msuspect\x1b\[0m", row)
    assert "35" in codes.split(";")  # magenta: not red (31), yellow (33) nor green (32)


def test_with_unsupported_fail_the_value_is_a_root_cause_and_the_mode_is_said(
    suspect_run: dict[str, Any],
) -> None:
    trace = str(suspect_run["trace"])
    code, report, _ = run_audit(trace, "--set", "verdicts.unsupported=fail")
    assert code == 1 and report["unsupported"] == "fail"
    assert report["suspects"] == [] and report["sessions_with_suspect_only"] == 0
    assert TRUTHFULNESS in {r["metric"] for r in report["ranking"]}
    _, view = _view(trace, "--summary", "--set", "verdicts.unsupported=fail")
    assert "unsupported = fail: a value the trace neither supports nor contradicts failed" in (
        _flat(view)
    )
    assert "suspects, ranked" not in view


def test_the_html_page_has_a_suspect_section_label_and_colour(
    suspect_run: dict[str, Any], tmp_path: Path
) -> None:
    page_path = tmp_path / "report.html"
    code, _ = _view(str(suspect_run["trace"]), "--summary", "--html", str(page_path))
    assert code == 0
    page = page_path.read_text(encoding="utf-8")
    section = page[page.index('<section id="suspects">') :]
    section = section[: section.index("</section>")]
    assert "Suspects, ranked by sessions hit" in section
    assert (
        'data-suspect="0"' in section and f'<span class="metric">{TRUTHFULNESS}</span>' in section
    )
    assert '<span id="suspect-only" class="sus"><b>1</b> with suspects only</span>' in page
    assert '<span class="lab lab-suspect"' in page and "suspect 1</span>" in page
    assert '<option value="suspect">suspect</option>' in page
    assert ".lab-suspect { background: var(--sus); }" in page
    assert "svg.graph .node.lab-suspect circle" in page
    data = json.loads(page.split('id="aem-data">', 1)[1].split("</script>", 1)[0])
    assert data["suspects"][0]["metric"] == TRUTHFULNESS
    [entry] = data["sessions"]
    assert entry["causes"] == [] and entry["suspects"][0][0] == "t2"
    assert entry["suspect_ranking"] == list(range(len(data["suspects"])))


def test_the_html_page_without_suspects_has_no_suspect_section(tmp_path: Path) -> None:
    trace = record(
        tmp_path / "down.jsonl", "down-1", _refund_agent("down-1", error=RuntimeError("db down"))
    )
    page_path = tmp_path / "report.html"
    code, _ = _view(str(trace), "--summary", "--html", str(page_path))
    assert code == 1
    page = page_path.read_text(encoding="utf-8")
    assert '<section id="suspects">' not in page and 'id="suspect-only"' not in page


def test_the_jsonl_sink_writes_the_suspect_label(
    suspect_run: dict[str, Any], tmp_path: Path
) -> None:
    verdicts = tmp_path / "verdicts.jsonl"
    config = tmp_path / "aem.toml"
    config.write_text(f'[sinks.jsonl]\npath = "{verdicts}"\n', encoding="utf-8")
    code, _, err = run_audit(str(suspect_run["trace"]), "--config", str(config), "--sink", "jsonl")
    assert code == 0, err
    lines = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    turns = {line["turn_id"]: line for line in lines if line["kind"] == "turn"}
    suspect = turns["t2"]
    assert suspect["key"].endswith("aem.label") and suspect["label"] == "suspect"
    assert suspect["failed_metrics"] == [] and TRUTHFULNESS in suspect["unverified_metrics"]
    assert turns["t1"]["label"] == "ok" and turns["t1"]["unverified_metrics"] == []
    metrics = {(m["turn_id"], m["name"]): m for m in lines if m["kind"] == "metric"}
    assert metrics[("t2", TRUTHFULNESS)]["outcome"] == "unverified"


def _turn_item(label: str, **extra: Any) -> OutboxItem:
    payload = {
        "session_id": "refund-1",
        "turn_id": "t2",
        "trace_id": "a" * 32,
        "span_id": "b" * 16,
        "label": label,
        "failed_metrics": [],
        "unverified_metrics": [TRUTHFULNESS],
        "root_cause_span_ids": [],
        **extra,
    }
    return OutboxItem(key="refund-1\x1ft2\x1faem.label", kind="turn", payload=payload)


def test_phoenix_and_mlflow_read_suspect_not_ok_nor_root_cause() -> None:
    item = _turn_item("suspect")
    said = label_explanation(item.payload)
    assert said.startswith("suspect: nothing proven") and TRUTHFULNESS in said
    assert "no metric failed" not in said
    written = annotation(item, "aem")
    assert written["name"] == "aem.label"
    assert written["result"] == {"label": "suspect", "explanation": said, "score": 0.5}
    assessment = feedback(item)
    # MLflow names a turn's verdict after its turn: the plain name holds the trace's worst.
    assert assessment["assessment_name"] == "t2.aem.label"
    assert assessment["feedback"] == {"value": "suspect"} and assessment["rationale"] == said
    ok = _turn_item("ok", unverified_metrics=[])
    assert annotation(ok, "aem")["result"]["explanation"] == "no metric failed"


def test_a_large_run_tables_suspect_only_sessions_after_the_failing_ones(tmp_path: Path) -> None:
    """Beyond ten sessions the view tables those with a root cause first, then, with the
    room left, those with only suspects, and counts what it left out by kind."""
    folder = tmp_path / "traces"
    folder.mkdir()
    failing = [f"down-{n:02d}" for n in range(9)]
    for conversation in failing:
        down = _refund_agent(conversation, error=RuntimeError("db down"))
        record(folder / f"{conversation}.jsonl", conversation, down)
    suspects = [f"refund-{n:02d}" for n in range(3)]
    for conversation in suspects:
        _suspect_trace(folder, conversation)
    code, view = _view(str(folder))
    assert code == 1
    titles = [line.split()[1] for line in view.splitlines() if line.startswith("session ")]
    assert titles == [*failing, suspects[0]]
    assert "not shown: 2 sessions (2 with suspects only), counted in the ranking" in _flat(view)
    assert "12 sessions, 9 with a root cause, 3 with suspects only" in _flat(view)
    ranking = view[view.index("suspects, ranked by sessions hit") :]
    assert re.search(rf"│ 1 │ 3 of 12 +│ {re.escape(TRUTHFULNESS)} ", ranking)
