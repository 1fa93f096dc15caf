"""``aem diff``: the fix-and-rerun loop — what disappeared, what appeared."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aem.cli import app
from tests.conftest import SAMPLES

TRIP = (SAMPLES / "parallel_tools.otlp.jsonl").read_text()


def _audit(tmp_path: Path, name: str, trace_text: str) -> Path:
    trace = tmp_path / f"{name}.jsonl"
    trace.write_text(trace_text)
    out = tmp_path / f"{name}.json"
    CliRunner().invoke(app, ["audit", str(trace), "--out", str(out), "--summary"])
    assert out.exists()
    return out


def _fixed(text: str) -> str:
    """The same run with the hotel search succeeding (status OK, no exception)."""
    lines = []
    for line in text.splitlines():
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            if span["name"] == "execute_tool get_hotels":
                span["status"] = {}
                span["events"] = []
                span["attributes"] = [a for a in span["attributes"] if a["key"] != "error.type"]
        lines.append(json.dumps(document))
    return "\n".join(lines)


def test_fixing_the_root_cause_shows_as_gone(tmp_path: Path) -> None:
    before = _audit(tmp_path, "before", TRIP)
    after = _audit(tmp_path, "after", _fixed(TRIP))
    result = CliRunner().invoke(app, ["diff", str(before), str(after), "--json"])
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    assert [c["signature"] for c in diff["disappeared"]] == [
        "tool_execution|tool_call|get_hotels|-"
    ]
    assert diff["appeared"] == [] and diff["sessions_fixed"] == ["trip-planner-7"]
    assert diff["flagged_turns_before"] > diff["flagged_turns_after"] == 0


def test_a_new_root_cause_fails_the_diff(tmp_path: Path) -> None:
    before = _audit(tmp_path, "before", _fixed(TRIP))
    after = _audit(tmp_path, "after", TRIP)
    result = CliRunner().invoke(app, ["diff", str(before), str(after)], env={"COLUMNS": "160"})
    assert result.exit_code == 1
    assert "new" in result.stdout and "get_hotels" in result.stdout
    assert "newly failing: 1" in result.stdout


def test_unreadable_report_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(app, ["diff", str(bad), str(bad)])
    assert result.exit_code == 2
