"""``--since last`` never skips a session for good: late arrivals and wrong clocks.

The cursor used to be "the newest start time read": a conversation that reached the
backend after a run but started before the newest span that run read was never
evaluated, and one span dated 2099 made every later run say "nothing to evaluate". Now
the cursor is what the backend received: Phoenix is read in the order it stored the
spans (``sort=id``, the mark of the last span read); MLflow, which keeps no time of
arrival, by start time from ``late_arrival`` before the previous run, with the spans
already seen set aside. Against the fake servers of tests/hostile_backend_kit.py, over
several incremental runs, every session is evaluated exactly once: on time, late, from
the future, and after a read that a bound cut short.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aem.pulls import CONCERN, MIGRATIONS, PullLedger
from aem.store import Store
from tests.hostile_backend_kit import FakeMlflow, FakePhoenix, endless, weather_session
from tests.scorecards_kit import cli

T0 = 1_776_852_000_000_000_000
HOUR = 3_600 * 10**9
Y2099 = 4_070_908_800 * 10**9  # 2099-01-01


def incremental(url: str, store: Path) -> tuple[int, list[str], list[dict[str, Any]], str]:
    """``aem audit --from URL --since last``: exit code, sessions evaluated, issues, stderr."""
    code, out, err = cli("audit", "--from", url, "--since", "last", "--store", str(store), "--json")
    report = json.loads(out)
    return code, [s["session_id"] for s in report["sessions"]], report["issues"], err


def full(url: str) -> list[str]:
    code, out, err = cli("audit", "--from", url, "--json")
    assert code in (0, 1), err
    return sorted(s["session_id"] for s in json.loads(out)["sessions"])


def _late_and_future(fake: Any, store: Path, starts: dict[str, int]) -> None:
    """Four runs: on time; late and future-dated; late again; nothing new."""
    evaluated: Counter[str] = Counter()
    fake.store(weather_session("a", "conv-a", starts["a"]))
    fake.store(weather_session("b", "conv-b", starts["b"]))
    code, found, _, err = incremental(fake.url(), store)
    assert code in (0, 1) and found == ["conv-a", "conv-b"], err
    evaluated.update(found)

    # A conversation that started before everything read so far, and one dated 2099.
    fake.store(weather_session("late", "conv-late", starts["late"]))
    fake.store(weather_session("future", "conv-future", Y2099))
    code, found, issues, err = incremental(fake.url(), store)
    assert code in (0, 1) and sorted(found) == ["conv-future", "conv-late"], err
    future = [i for i in issues if i["kind"] == "future_start"]
    assert len(future) == 5 and "its start not trusted" in future[0]["message"]
    evaluated.update(found)

    # The 2099 span does not stop later runs: another late one is still news.
    fake.store(weather_session("next", "conv-next", starts["next"]))
    code, found, _, err = incremental(fake.url(), store)
    assert code in (0, 1) and found == ["conv-next"], err
    evaluated.update(found)

    code, found, _, err = incremental(fake.url(), store)
    assert (code, found) == (0, []) and "nothing to evaluate" in err
    assert full(fake.url()) == sorted(evaluated)
    assert set(evaluated.values()) == {1}, evaluated  # each session exactly once


def test_phoenix_late_and_future_sessions_are_each_evaluated_once(tmp_path: Path) -> None:
    with FakePhoenix(page_size=4) as fake:
        starts = {"a": T0 + 2 * HOUR, "b": T0 + 3 * HOUR, "late": T0, "next": T0 + HOUR}
        _late_and_future(fake, tmp_path / "aem.sqlite", starts)
        sorts = {r["query"].get("sort", [""])[0] for r in fake.requests}
        assert sorts == {"id", "start_time"}  # news by storage order, sessions by start


def test_mlflow_late_and_future_sessions_are_each_evaluated_once(tmp_path: Path) -> None:
    """MLflow has no time of arrival: start times near now, within the overlap."""
    now = time.time_ns()
    with FakeMlflow(search_page=2) as fake:
        starts = {"a": now - 3 * HOUR, "b": now - 2 * HOUR, "late": now - 5 * HOUR}
        _late_and_future(fake, tmp_path / "aem.sqlite", {**starts, "next": now - 4 * HOUR})
    seen = sqlite3.connect(tmp_path / "aem.sqlite").execute(
        "SELECT min(start_unix_nano), count(*) FROM pull_seen"
    )
    first, count = seen.fetchone()
    assert count == 25 and first >= now - 24 * HOUR - 10**9  # pruned below the cursor


def test_a_read_cut_short_moves_the_mark_only_past_what_it_read(tmp_path: Path) -> None:
    """The news read of run 2 stops at its second page: what it read is evaluated, the
    stop is reported in the audit's report, and run 3 reads on from there. (Six spans a
    page: the read restarts at the last span read, so page 1 is b's last and all of c.)"""
    store = tmp_path / "aem.sqlite"
    with FakePhoenix(page_size=6) as fake:
        fake.store(weather_session("a", "conv-a", T0))
        fake.store(weather_session("b", "conv-b", T0 + HOUR))
        assert incremental(fake.url(), store)[1] == ["conv-a", "conv-b"]
        fake.store(weather_session("c", "conv-c", T0 + 2 * HOUR))
        fake.store(weather_session("d", "conv-d", T0 + 3 * HOUR))
        fake.hostile[3] = endless()  # rows 16-20 of the storage order: all of d
        code, found, issues, err = incremental(fake.url(max_page_bytes=1 << 20), store)
        assert code in (0, 1) and found == ["conv-c"], err
        [stop] = [i for i in issues if i["kind"] == "unreadable"]
        assert stop["message"].startswith("finding what is new: page 2: the answer is larger")
        assert "skipped; the verdicts cover the rest" in " ".join(err.split())
        del fake.hostile[3]
        assert incremental(fake.url(), store)[1] == ["conv-d"]
        assert incremental(fake.url(), store)[1] == []
    rows = sqlite3.connect(store).execute("SELECT session_id, spans FROM pull_sessions")
    assert sorted(rows) == [("conv-a", 5), ("conv-b", 5), ("conv-c", 5), ("conv-d", 5)]


def test_a_version_1_ledger_goes_back_a_day_and_keeps_its_sessions(tmp_path: Path) -> None:
    """A ledger written by the old cursor ("newest start read"), upgraded in place."""
    path = tmp_path / "aem.sqlite"
    old = Store(path)
    old.ensure(CONCERN, {1: MIGRATIONS[1]})
    with old.transaction() as conn:
        conn.execute("INSERT INTO pull_cursors VALUES ('phoenix://h/p', ?, 0)", (Y2099,))
    old.close()
    ledger = PullLedger(Store(path))
    assert ledger.cursor("phoenix://h/p") == Y2099 - 24 * HOUR
    assert Store(path).schema_versions()[CONCERN] == max(MIGRATIONS)


@pytest.fixture(autouse=True)
def _no_store_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "default-store.sqlite"))


class _Listed:
    """A source of spans held in memory, read by start time (no storage order)."""

    name = "listed://spans"

    def __init__(self, spans: list[Any]) -> None:
        self.spans = spans

    def batches(self, window: Any, issues: list[Any]) -> Iterator[list[Any]]:
        since = window.since_unix_nano if window.since_unix_nano is not None else -(2**63)
        yield sorted((s for s in self.spans if s.start_unix_nano >= since), key=_start)


def _start(span: Any) -> int:
    return int(span.start_unix_nano)


def test_a_session_selected_but_not_recorded_is_read_again(tmp_path: Path) -> None:
    """A session whose evaluation raised is left out of ``plan.seen`` by the command: the
    ledger keeps its traces pending, and the next run reads them again though nothing new
    arrived, until a run records it."""
    from collectors.reading import assemble_all

    now = time.time_ns()
    spans = weather_session("p", "conv-p", now - HOUR)
    ledger, source = PullLedger(Store(tmp_path / "aem.sqlite")), _Listed(spans)
    plan = ledger.plan(source, None)
    [session] = assemble_all(spans, None)
    assert plan.news == 5 and plan.select(session)
    plan.seen.clear()  # what aem.cli.audit does with a session whose evaluation raised
    ledger.record(plan, {})
    again = ledger.plan(source, None)
    assert again.news == 1 and again.window.since_unix_nano == now - HOUR  # 1 pending trace
    assert again.select(session) and ledger.sessions(source.name) == []
    ledger.record(again, {})
    assert [row["session_id"] for row in ledger.sessions(source.name)] == ["conv-p"]
    assert ledger.plan(source, None).news == 0


def test_a_read_by_start_time_says_what_its_window_left_out(tmp_path: Path) -> None:
    """Was: a trace back-filled more than the overlap after its start was skipped for good
    while the run said only "no new spans"."""
    now = time.time_ns()
    store = tmp_path / "aem.sqlite"
    with FakeMlflow(search_page=2) as fake:
        fake.store(weather_session("a", "conv-a", now - HOUR))
        code, found, _, err = incremental(fake.url(late_arrival_seconds=3600), store)
        assert code in (0, 1) and found == ["conv-a"], err
        assert "--since last read traces" not in err  # a first run reads everything
        fake.store(weather_session("old", "conv-old", now - 3 * HOUR))  # stored 3 h late
        code, found, _, err = incremental(fake.url(late_arrival_seconds=3600), store)
    said = " ".join(err.split())
    assert (code, found) == (0, []) and "nothing to evaluate" in said
    assert "--since last read traces that started from " in said
    assert "late_arrival_seconds=3,600" in said and "?late_arrival_seconds=N" in said
    with FakePhoenix(page_size=4) as phoenix:
        phoenix.store(weather_session("p", "conv-p", now - HOUR))
        incremental(phoenix.url(), store)
        _, _, _, err = incremental(phoenix.url(), store)
    assert "--since last read traces" not in err  # storage order: nothing is left out
