"""A hostile Phoenix: every bound holds, and what came before the fault is still audited.

The server is a fake Phoenix on loopback (tests/hostile_backend_kit.py) serving three
sessions of five spans, five spans a page, and answering one page as a hostile server
would: an endless body, a body that declares a gigabyte, a byte every half second (of the
body, or even of the headers), a cursor that comes back or is an integer, pages without
end, a page nested 100,000 levels deep, records that are not spans. Each test runs
``aem audit --from phoenix://…`` through the command line and checks the bound (seconds,
bytes the server got to send), that the sessions before the fault are in the report, that
the fault is an input issue naming the backend and the page, and the exit code the README
documents: the verdict's own (0/1) with the input skipped said on stderr, 2 with
``--strict``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.backends.bounded import (
    DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_REQUEST_SECONDS,
    PullLimits,
)
from tests.hostile_backend_kit import (
    FakePhoenix,
    declared,
    deep,
    drip,
    elapsed,
    endless,
    raw,
    weather_session,
)
from tests.scorecards_kit import cli
from tests.serve.conftest import ROOT

T0 = 1_776_852_000_000_000_000
HOUR = 3_600 * 10**9
MIB = 1 << 20
AEM = str(Path(sys.executable).with_name("aem"))  # the console script of this venv


@pytest.fixture(autouse=True)
def _no_store_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "default-store.sqlite"))


@pytest.fixture
def phoenix() -> Iterator[FakePhoenix]:
    """Three sessions, conv-a to conv-c, an hour apart: pages 1, 2 and 3 of five spans."""
    with FakePhoenix(page_size=5) as fake:
        for n, name in enumerate("abc"):
            fake.store(weather_session(name, f"conv-{name}", T0 + n * HOUR))
        yield fake


def audit(url: str, *options: str) -> tuple[int, dict[str, Any], str, float]:
    """``aem audit --from URL --json``: exit code, report, stderr, seconds taken."""
    (code, out, err), seconds = elapsed(lambda: cli("audit", "--from", url, "--json", *options))
    return code, json.loads(out) if out else {}, " ".join(err.split()), seconds


def sessions(report: dict[str, Any]) -> list[str]:
    return [s["session_id"] for s in report["sessions"]]


def stop_issue(report: dict[str, Any], page: int) -> dict[str, Any]:
    [issue] = [i for i in report["issues"] if i["kind"] == "unreadable"]
    assert issue["source"].endswith(f"/default page {page}")
    assert "the rest of the source was not read" in issue["message"]
    return issue


def test_the_bounds_are_generous_by_default() -> None:
    assert PullLimits() == PullLimits(64 * MIB, 60.0, 10_000)
    assert (DEFAULT_MAX_PAGE_BYTES, DEFAULT_REQUEST_SECONDS, DEFAULT_MAX_PAGES) == (
        64 * MIB,
        60.0,
        10_000,
    )


def test_an_endless_body_is_cut_at_the_cap_and_the_pages_before_are_audited(
    phoenix: FakePhoenix,
) -> None:
    phoenix.hostile[3] = endless()
    code, report, err, seconds = audit(phoenix.url(max_page_bytes=MIB))
    assert code in (0, 1), err
    # What got sent is the cap and the sockets' buffers (unbounded: 3 GB in 6-18 s).
    assert seconds < 30 and phoenix.sent < MIB + 32 * MIB
    assert sessions(report) == ["conv-a", "conv-b"] and report["spans_read"] == 10
    issue = stop_issue(report, 3)
    assert "larger than 1,048,576 bytes (max_page_bytes" in issue["message"]
    assert "after 2 page(s) and 10 record(s)" in issue["message"]
    assert "skipped; the verdicts cover the rest" in err
    code, _, err, _ = audit(phoenix.url(max_page_bytes=MIB), "--strict")
    assert code == 2 and "(--strict)" in err


def test_a_page_that_declares_a_gigabyte_is_refused_before_it_is_read(
    phoenix: FakePhoenix,
) -> None:
    phoenix.hostile[2] = declared(1 << 30)
    code, report, err, seconds = audit(phoenix.url())
    assert code in (0, 1), err
    assert seconds < 30 and phoenix.sent < 48 * MIB  # sockets' buffers, not the 64 MiB cap
    assert sessions(report) == ["conv-a"]
    assert "it declares 1,073,741,824" in stop_issue(report, 2)["message"]


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_drip_ends_at_the_request_deadline(phoenix: FakePhoenix, headers_too: bool) -> None:
    """A byte every half second restarts any read timeout; the deadline is per request."""
    phoenix.hostile[2] = drip(0.5, headers_too=headers_too)
    code, report, err, seconds = audit(phoenix.url(request_seconds=2))
    assert code in (0, 1), err
    assert seconds < 15  # unbounded: one page held past 240 s
    assert sessions(report) == ["conv-a"]
    assert "no whole answer within 2 s (request_seconds)" in stop_issue(report, 2)["message"]
    assert [r["query"].get("cursor") is None for r in phoenix.requests] == [True, False]


@pytest.mark.parametrize("back_at", [2, 3], ids=["repeats", "cycles"])
def test_a_cursor_that_comes_back_ends_the_read(phoenix: FakePhoenix, back_at: int) -> None:
    """Page 2 (or 3) answers the cursor that led to page 2: followed, it never ends."""
    given: dict[int, Any] = {}

    def loop(page: int, real: str | None) -> Any:
        given[page] = real
        return given[1] if page == back_at else real

    phoenix.next_cursor = loop
    code, report, err, seconds = audit(phoenix.url())
    assert code in (0, 1), err
    assert seconds < 30 and len(phoenix.requests) == back_at
    assert sessions(report) == ["conv-a", "conv-b", "conv-c"][:back_at]
    assert "was already followed: the pages would never end" in err + json.dumps(report)
    stop_issue(report, back_at)


def test_an_integer_cursor_ends_the_read(phoenix: FakePhoenix) -> None:
    phoenix.next_cursor = lambda page, real: page + 1 if page == 2 else real
    code, report, err, _ = audit(phoenix.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b"] and len(phoenix.requests) == 2
    assert "'next_cursor' is not a string (got int '3')" in stop_issue(report, 2)["message"]


@pytest.mark.parametrize(
    ("bound", "said"),
    [
        ({"max_pages": 6}, "more pages than 6 (max_pages)"),
        ({"max_seconds": 2}, "the longest one read takes (max_seconds)"),
    ],
    ids=["pages", "seconds"],
)
def test_pages_without_end_stop_at_a_bound(
    phoenix: FakePhoenix, bound: dict[str, int], said: str
) -> None:
    fresh = iter(range(10**9))
    phoenix.next_cursor = lambda page, real: real or f"more-{next(fresh)}"
    code, report, err, seconds = audit(phoenix.url(**bound))
    assert code in (0, 1), err
    assert seconds < 20 and sessions(report) == ["conv-a", "conv-b", "conv-c"]
    pages = len(phoenix.requests)
    assert pages == 6 if "max_pages" in bound else pages > 6
    assert said in stop_issue(report, pages + 1)["message"]


def test_a_page_nested_100000_deep_is_refused_and_the_rest_audited(
    phoenix: FakePhoenix,
) -> None:
    phoenix.hostile[3] = raw(b'{"data": ' + deep() + b"}")
    code, report, err, _ = audit(phoenix.url())  # was: RecursionError, exit 3
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b"]
    assert "nested more than 1,024 levels deep; refused" in stop_issue(report, 3)["message"]


def test_the_command_exits_2_not_3_on_a_deep_page_with_strict(phoenix: FakePhoenix) -> None:
    """The installed command, in a process of its own: the exit code a script sees."""
    phoenix.hostile[2] = raw(deep())
    done = subprocess.run(
        [AEM, "audit", "--from", phoenix.url(), "--strict", "--json"],
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "RecursionError" not in done.stderr and "Traceback" not in done.stderr
    assert sessions(json.loads(done.stdout)) == ["conv-a"]
    assert "skipped (--strict)" in " ".join(done.stderr.split())


def test_a_page_nested_deep_at_the_first_page_is_a_clear_error(phoenix: FakePhoenix) -> None:
    phoenix.hostile[1] = raw(deep())
    code, report, err, _ = audit(phoenix.url())
    assert code == 2 and report == {}
    assert f"{phoenix.url().split('?')[0]}: page 1: the answer is nested more than" in err


POISON: list[tuple[str, Any, str]] = [
    ("parent_id", {"evil": True}, "parentSpanId must be a hex string, got dict"),
    ("parent_id", "not-hex", "parentSpanId 'not-hex' is not 16 hex characters"),
    ("span_id", "00" * 8, "spanId is all zeros"),
    ("trace_id", 12345, "traceId must be a hex string, got int"),
    ("attributes", {"gen_ai.operation.name": ["chat"]}, "expected a string"),
]


def _iso(unix_nano: int) -> str:
    from collectors.backends.phoenix import iso

    return iso(unix_nano)


def _poisoned(fake: FakePhoenix, field: str, value: Any) -> None:
    """A span of a fourth session, its ``field`` poisoned (after conv-a's spans)."""
    [span] = [s for s in weather_session("p", "conv-p", T0 + 3 * HOUR) if not s.parent_span_id]
    record = dict(fake.records[0])
    record.update(  # it starts before every other span: page 1, line 1
        context={"trace_id": span.trace_id, "span_id": span.span_id},
        name=span.name,
        parent_id=None,
        attributes=dict(span.attributes),
        start_time=_iso(T0 - HOUR),
        end_time=_iso(T0 - HOUR + 10**9),
    )
    if field in ("trace_id", "span_id"):
        record["context"] = {**record["context"], field: value}
    elif field == "attributes":
        record["attributes"] = {**record["attributes"], **value}
    else:
        record[field] = value
    fake.store_record(record)


@pytest.mark.parametrize(("field", "value", "message"), POISON, ids=[p[2][:24] for p in POISON])
def test_a_poison_record_is_reported_and_skipped(
    phoenix: FakePhoenix, field: str, value: Any, message: str
) -> None:
    _poisoned(phoenix, field, value)
    code, report, err, _ = audit(phoenix.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b", "conv-c"]
    [bad] = [i for i in report["issues"] if i["kind"] == "bad_span"]
    assert message in bad["message"] and bad["spans_skipped"] == 1
    assert bad["source"].endswith("/default page 1") and bad["line"] == 1
    assert "1 span skipped; the verdicts cover the rest" in err
    code, _, err, _ = audit(phoenix.url(), "--strict")
    assert code == 2


def test_records_that_are_not_spans_or_nest_too_deep_are_skipped(phoenix: FakePhoenix) -> None:
    nested: Any = "bottom"
    for _ in range(600):  # well within JSON's 1,024 levels, past what a span may hold
        nested = [nested]
    phoenix.store_record({"just": "a string"})
    phoenix.records.append("not even an object")  # type: ignore[arg-type]
    phoenix.store_record({**phoenix.records[0], "attributes": {"deep": nested}})
    code, report, err, _ = audit(phoenix.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b", "conv-c"]
    messages = [i["message"] for i in report["issues"] if i["kind"] == "bad_span"]
    assert len(messages) == 3
    assert any("nested more than 128 levels deep" in m for m in messages)
    assert any("a span is an object, not str" in m for m in messages)


def test_bad_bound_settings_are_refused() -> None:
    for query, said in (
        ("max_page_bytes=0", "max_page_bytes='0' must be a number above 0"),
        ("request_seconds=nan", "request_seconds='nan' must be a number above 0"),
        ("max_pages=lots", "max_pages='lots' must be a number above 0"),
        ("max_page_byte=5", "unknown URL parameter(s) max_page_byte"),
    ):
        code, _, err, _ = audit(f"phoenix://127.0.0.1:1/default?{query}")
        assert code == 2 and said in err, err


def busy(retry_after: str) -> Any:
    """A 503 carrying ``retry_after`` as its ``Retry-After`` header."""

    def answer(handler: Any) -> None:
        handler.send_response(503)
        handler.send_header("Retry-After", retry_after)
        handler.send_header("Content-Length", "4")
        handler.end_headers()
        handler.wfile.write(b"busy")

    return answer


@pytest.mark.parametrize(
    "value",
    ["Mon, 01 Jan 99999999999999999999 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"],
    ids=["overflowing", "far-future"],
)
def test_a_hostile_retry_after_on_the_first_page_is_exit_2_naming_the_backend(
    phoenix: FakePhoenix, value: str
) -> None:
    """Was: OverflowError, exit 3 (and a far-future date waited the longest pause)."""
    phoenix.hostile[1] = busy(value)
    code, report, err, seconds = audit(phoenix.url())
    assert code == 2 and report == {}, err
    assert "OverflowError" not in err and "Traceback" not in err
    assert f"127.0.0.1:{phoenix.port}" in err and "answered 503: busy" in err
    assert seconds < 30  # the source's own backoff, not the header's


def test_the_whole_read_stops_at_max_spans_and_what_was_read_is_audited(
    phoenix: FakePhoenix,
) -> None:
    code, report, err, _ = audit(phoenix.url(max_spans=5))
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a"] and report["spans_read"] == 5
    assert "5 spans, the most one read keeps (max_spans)" in stop_issue(report, 2)["message"]
