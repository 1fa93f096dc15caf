"""A session whose evaluation raises is reported, never silently absent.

The error is forced through the public interface: a configured metric plug-in that, for
one session only, yields something that is not a result (a bug the per-metric guard,
which turns a metric that *raises* into ``error`` outcomes, does not catch), so
evaluating that session raises. Before the fix the report builder dropped the
``evaluation_error`` issue (it has a session id, and only sessions' own reports list
those), the run exited 0, and ``--since last`` recorded the session as evaluated, so it
was never read again. Now:

* the issue is in the JSON report's ``issues`` and said on stderr, with what raised;
* the other sessions are evaluated as before;
* ``--strict`` exits 2; without it the exit code is the other sessions' (1 with a root
  cause), or 2 when no other session has one (README, exit codes);
* ``--since last`` does not record the session as evaluated, and the next run reads it
  again (the ledger keeps it pending, :mod:`aem.pulls`) until one evaluates it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from aem.foundation.model import SpanRecord
from collectors.readers import read_batches
from tests.collectors.test_backend_sources import phoenix_span
from tests.conftest import SAMPLES, run_audit
from tests.scorecards_kit import cli

BROKEN = "weather-genai"
WEATHER = [SAMPLES / "weather_genai.otlp.jsonl", SAMPLES / "weather_openinference.otlp.jsonl"]
WITH_ROOT_CAUSE = SAMPLES / "parallel_tools.otlp.jsonl"  # session trip-planner-7
PLUGIN = f"""
class BrokenForOne:
    name = "team.broken_for_one"

    def evaluate(self, context):
        if context.session.session_id == {BROKEN!r}:
            yield "not a MetricResult"
"""


@pytest.fixture
def broken_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The ``--set`` that configures the plug-in."""
    (tmp_path / "team_broken.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield 'metrics.plugins=["team_broken:BrokenForOne"]'
    sys.modules.pop("team_broken", None)


def _said(err: str) -> str:
    return " ".join(err.split())


def test_the_error_is_reported_and_the_other_sessions_are_evaluated(broken_plugin: str) -> None:
    files = [*map(str, WEATHER), str(WITH_ROOT_CAUSE)]
    code, report, err = run_audit(*files, "--set", broken_plugin)
    assert code == 1, err  # trip-planner-7's root cause; the error does not hide it
    assert sorted(s["session_id"] for s in report["sessions"]) == ["trip-planner-7", "weather-oi"]
    [issue] = [i for i in report["issues"] if i["kind"] == "evaluation_error"]
    assert issue["session_id"] == BROKEN and issue["spans_skipped"] > 0
    assert issue["source"] == str(WEATHER[0])
    assert "AttributeError" in issue["message"]
    assert report["skipped"]["by_kind"]["evaluation_error"] == 1
    said = _said(err)
    assert f"error: session '{BROKEN}' not evaluated: AttributeError" in said
    assert f"1 session not evaluated ({BROKEN})" in said

    code, _, err = run_audit(*files, "--set", broken_plugin, "--strict")
    assert code == 2
    assert f"error: 1 session not evaluated ({BROKEN})" in _said(err) and "(--strict)" in err


def test_with_no_root_cause_elsewhere_the_error_exits_2(broken_plugin: str) -> None:
    code, report, err = run_audit(*map(str, WEATHER), "--set", broken_plugin)
    assert code == 2, err  # "no root causes" would be a verdict on a session not evaluated
    assert [s["session_id"] for s in report["sessions"]] == ["weather-oi"]
    assert "1 session(s) could not be evaluated and no other has a root cause" in _said(err)


class FakePhoenix(ThreadingHTTPServer):
    """Phoenix's span pages for one project, every span on one page: by start time
    within ``start_time`` / ``end_time``, or (``sort=id``) in the order stored, from the
    record ``cursor`` names on (Phoenix pages "at or after" a cursor)."""

    daemon_threads = True

    def __init__(self, spans: list[SpanRecord]) -> None:
        super().__init__(("127.0.0.1", 0), PhoenixHandler)
        self.records = [phoenix_span(s) for s in spans]  # stored in this order
        self.starts = [s.start_unix_nano for s in spans]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"phoenix://127.0.0.1:{self.server_address[1]}/default"

    def page(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        if query.get("sort") == ["id"]:
            ids = [r["id"] for r in self.records]
            cursor = query.get("cursor", [None])[0]
            return self.records[ids.index(cursor) if cursor in ids else 0 :]
        since = _nanos(query.get("start_time", [None])[0], 0)
        until = _nanos(query.get("end_time", [None])[0], 2**63)
        order = sorted(range(len(self.records)), key=lambda n: self.starts[n])
        return [self.records[n] for n in order if since <= self.starts[n] < until]


class PhoenixHandler(BaseHTTPRequestHandler):
    server: FakePhoenix

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        page = self.server.page(parse_qs(urlsplit(self.path).query))
        data = json.dumps({"data": page, "next_cursor": None}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _nanos(text: str | None, default: int) -> int:
    if text is None:
        return default
    moment = datetime.fromisoformat(text)
    return int(moment.replace(microsecond=0).timestamp()) * 10**9 + moment.microsecond * 1000


def _incremental(url: str, store: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = cli(
        "audit", "--from", url, "--since", "last", "--store", str(store), "--json", *extra
    )
    return code, json.loads(out) if out.strip() else {}, err


def _ledger(store: Path) -> list[str]:
    rows = sqlite3.connect(store).execute("SELECT session_id FROM pull_sessions").fetchall()
    return sorted(str(r[0]) for r in rows)


@pytest.fixture
def phoenix() -> Iterator[FakePhoenix]:
    server = FakePhoenix([s for path in WEATHER for b in read_batches(str(path)) for s in b.spans])
    yield server
    server.shutdown()
    server.server_close()


def test_since_last_does_not_record_the_session_as_evaluated(
    broken_plugin: str, phoenix: FakePhoenix, tmp_path: Path
) -> None:
    store = tmp_path / "aem.sqlite"
    code, report, err = _incremental(phoenix.url, store, "--set", broken_plugin)
    assert code == 2, err
    assert [s["session_id"] for s in report["sessions"]] == ["weather-oi"]
    assert [i["session_id"] for i in report["issues"]] == [BROKEN]
    assert _ledger(store) == ["weather-oi"]  # the broken session is not "evaluated"


def test_since_last_reads_a_session_whose_evaluation_raised_again(
    broken_plugin: str, phoenix: FakePhoenix, tmp_path: Path
) -> None:
    store = tmp_path / "aem.sqlite"
    code, report, err = _incremental(phoenix.url, store, "--set", broken_plugin)
    assert code == 2 and _ledger(store) == ["weather-oi"], err
    # Read again while it still raises: reported again, weather-oi not re-evaluated.
    code, report, err = _incremental(phoenix.url, store, "--set", broken_plugin)
    assert code == 2 and report["sessions"] == [], err
    assert [i["session_id"] for i in report["issues"]] == [BROKEN]
    # The plug-in fixed: the session is evaluated, and recorded.
    code, report, err = _incremental(phoenix.url, store)
    assert code == 0, err
    assert [s["session_id"] for s in report["sessions"]] == [BROKEN]
    assert _ledger(store) == [BROKEN, "weather-oi"]
    code, report, err = _incremental(phoenix.url, store)
    assert code == 0 and report["sessions"] == [] and "no new spans" in err


RAISING = """
class Raising:
    name = "team.raising"

    def evaluate(self, context):
        raise RuntimeError("the team's service is down")
"""


def test_metric_errors_are_counted_and_strict_makes_them_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: a metric that raises gave `error` results and exit 0, even with --strict."""
    (tmp_path / "team_raising.py").write_text(RAISING)
    monkeypatch.syspath_prepend(str(tmp_path))
    configured = 'metrics.plugins=["team_raising:Raising"]'
    try:
        code, report, err = run_audit(str(WEATHER[1]), "--set", configured)
        assert code == 0, err
        errors = [
            m
            for t in report["sessions"][0]["turns"]
            for m in t["metrics"]
            if m["outcome"] == "error"
        ]
        assert errors and all(m["name"] == "team.raising" for m in errors)
        said = _said(err)
        assert (
            f"warning: {len(errors)} metric result(s) are errors (team.raising {len(errors)})"
            in (said)
        )
        assert "the team's service is down" in said and "(--strict makes this exit 2)" in said
        code, _, err = run_audit(str(WEATHER[1]), "--set", configured, "--strict")
        assert code == 2 and "metric result(s) are errors" in err and "(--strict)" in err
    finally:
        sys.modules.pop("team_raising", None)
