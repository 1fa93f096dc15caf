"""A pull right after the agent ran: ``aem audit --from phoenix://… --settle SECONDS``.

The backend is a Phoenix-shaped server on loopback (tests/hostile_backend_kit.py) that
stores spans *late*, as a real Phoenix does behind its insert queue: some spans of a
session are visible to a read only some time after they were sent. What must hold, through
the command line:

- with the default wait the pull reads on until the backend settled: every session whole,
  no span twice, and it says it read again;
- read at once (``--settle 0``) it under-reads, and says how many sessions look unfinished
  and how to wait; ``--strict`` makes that exit 2;
- a backend that never settles (spans keep arriving) ends the wait at its bound, says so,
  and the sessions still arriving are named unfinished.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.backends.settle import max_wait
from tests.hostile_backend_kit import FakePhoenix, elapsed, weather_session
from tests.scorecards_kit import cli

SECOND = 10**9


@pytest.fixture(autouse=True)
def _no_store_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "default-store.sqlite"))


class LatePhoenix(FakePhoenix):
    """A Phoenix whose reads see a stored span only once its ``visible_at`` passed."""

    def __init__(self) -> None:
        super().__init__(page_size=4)
        self.visible_at: dict[str, float] = {}

    def store_late(self, spans: list[Any], after_seconds: float) -> None:
        before = len(self.records)
        self.store(spans)
        for record in self.records[before:]:
            self.visible_at[record["id"]] = time.time() + after_seconds

    def _ordered(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        now = time.time()
        return [r for r in super()._ordered(query) if self.visible_at.get(r["id"], 0) <= now]


def _just_sent(name: str, started_ago: float = 3.0) -> list[Any]:
    """A session of five spans that started ``started_ago`` seconds ago and ended 1.9 s
    after that (its root ends last)."""
    return weather_session(name, f"conv-{name}", time.time_ns() - int(started_ago * SECOND))


@pytest.fixture
def phoenix() -> Iterator[LatePhoenix]:
    """conv-a stored whole; conv-b and conv-c without their last two spans (the root
    among them) for one more second."""
    with LatePhoenix() as fake:
        fake.store(_just_sent("a"))
        for name in "bc":
            spans = _just_sent(name)
            fake.store(spans[:3])
            fake.store_late(spans[3:], after_seconds=1.0)
        yield fake


def audit(url: str, *options: str) -> tuple[int, dict[str, Any], str, float]:
    (code, out, err), seconds = elapsed(lambda: cli("audit", "--from", url, "--json", *options))
    return code, json.loads(out) if out else {}, " ".join(err.split()), seconds


def test_the_default_pull_reads_on_until_the_backend_settled(phoenix: LatePhoenix) -> None:
    code, report, err, seconds = audit(phoenix.url(), "--strict")
    assert code in (0, 1), err
    assert report["spans_read"] == 15  # every span, none read twice by the re-reads
    assert sorted(s["session_id"] for s in report["sessions"]) == ["conv-a", "conv-b", "conv-c"]
    assert not [i for i in report["issues"] if i["kind"] == "orphan_span"]
    assert "reading again in" in err and "until the backend settled (--settle 5)" in err
    assert "look unfinished" not in err
    assert seconds < max_wait(5) + 10


def test_a_pull_read_at_once_says_which_sessions_look_unfinished(phoenix: LatePhoenix) -> None:
    code, report, err, _ = audit(phoenix.url(), "--settle", "0")
    assert code in (0, 1), err
    assert report["spans_read"] == 11  # the four late spans were not stored yet
    assert "2 of 3 session(s) look unfinished (2 with a span whose parent was not read" in err
    assert "conv-b, conv-c" in err and "larger --settle" in err
    assert "(--strict makes this exit 2)" in err
    assert "reading again" not in err


def test_strict_makes_an_under_read_pull_exit_2(phoenix: LatePhoenix) -> None:
    code, report, err, _ = audit(phoenix.url(), "--settle", "0", "--strict")
    assert code == 2
    assert report["spans_read"] == 11  # the report is still written
    assert "error: 2 of 3 session(s) look unfinished" in err and "(--strict)" in err


def test_a_backend_not_in_use_costs_no_request_more() -> None:
    with LatePhoenix() as fake:
        fake.store(_just_sent("a", started_ago=11 * 60))  # before the 10 minutes looked back
        code, report, err, seconds = audit(fake.url(), "--strict")
        requests = len(fake.requests)
    assert code in (0, 1), err
    assert report["spans_read"] == 5 and requests == 2  # five spans, four a page: no re-read
    assert "reading again" not in err and "look unfinished" not in err and seconds < 10


def test_a_run_none_of_whose_spans_is_stored_yet_is_read_in_a_backend_in_use() -> None:
    """The run before, two minutes ago, is stored; the run just sent is not stored at all
    when the pull begins: the pull sees nothing recent of it, but the backend is in use,
    so it reads again once the settle time has passed."""
    with LatePhoenix() as fake:
        fake.store(_just_sent("before", started_ago=120))
        fake.store_late(_just_sent("now"), after_seconds=1.0)
        code, report, err, _ = audit(fake.url(), "--settle", "2", "--strict")
    assert code in (0, 1), err
    assert sorted(s["session_id"] for s in report["sessions"]) == ["conv-before", "conv-now"]
    assert report["spans_read"] == 10 and "5 span(s) more" in err


def test_spans_ending_after_the_read_end_the_wait_at_once_and_say_so() -> None:
    """A clock a few minutes ahead: the newest span ends after the read, later than the
    wait allows; the pull does not sleep for nothing, and says it did not settle."""
    with LatePhoenix() as fake:
        fake.store(_just_sent("ahead", started_ago=-120))
        code, report, err, seconds = audit(fake.url(), "--strict")
    assert seconds < 10 and report["spans_read"] == 5
    assert "the backend had not settled after 0 s (0 re-read(s)" in err
    assert code == 2 and "1 of 1 session(s) look unfinished" in err


@pytest.mark.slow
def test_a_backend_that_never_settles_ends_the_wait_at_its_bound() -> None:
    stop = threading.Event()
    with LatePhoenix() as fake:
        fake.store(_just_sent("first"))

        def agent() -> None:  # a new session every half second, for longer than the wait
            n = 0
            while not stop.wait(0.5):
                n += 1
                fake.store(_just_sent(f"s{n}", started_ago=1.9))

        sender = threading.Thread(target=agent, daemon=True)
        sender.start()
        try:
            code, report, err, seconds = audit(fake.url(), "--settle", "1", "--strict")
        finally:
            stop.set()
            sender.join(timeout=5)
    assert max_wait(1) - 2 <= seconds < max_wait(1) + 15
    assert "the backend had not settled after" in err and "what was read is audited" in err
    assert code == 2 and "look unfinished" in err and "with spans that ended less than 1 s" in err
    assert len(report["sessions"]) > 10  # what arrived during the wait was read and audited
