"""What the terminal view and the report say about inputs with nothing to evaluate: a
logs-only OTLP file among trace files is reported, and a session with no turns is named
as such instead of drawn as an empty table that reads as "all fine"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from aem.cli import app
from tests.conftest import SAMPLES, run_audit

LOGS = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": "hi"}}]}]}]}
PLAIN_SPAN = {
    "resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
        "name": "set-up", "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "session.id", "value": {"stringValue": "s-empty"}}],
    }]}]}]
}  # fmt: skip


def test_a_logs_only_file_in_a_directory_is_reported(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "parallel_tools.otlp.jsonl", tmp_path)
    (tmp_path / "app.logs.otlp.jsonl").write_text(json.dumps(LOGS) + "\n")
    code, report, _ = run_audit(str(tmp_path))
    assert code == 1  # the traces are still audited
    [issue] = [i for i in report["issues"] if i["kind"] == "not_traces"]
    assert issue["source"].endswith("app.logs.otlp.jsonl") and "logs" in issue["message"]


def test_a_logs_only_input_is_exit_2_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "app.logs.otlp.jsonl"
    path.write_text(json.dumps(LOGS) + "\n")
    result = CliRunner().invoke(app, ["audit", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "not_traces: an OTLP logs record, not traces" in result.stdout
    assert "no spans could be read" in result.stderr


def test_a_session_without_turns_is_one_line_not_an_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "setup.otlp.jsonl"
    path.write_text(json.dumps(PLAIN_SPAN) + "\n")
    result = CliRunner().invoke(app, ["audit", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "1 session with no turns to evaluate: s-empty" in result.stdout
    assert "session s-empty" not in result.stdout  # no table title for it
