"""A hostile MLflow: every bound holds, one bad trace costs only itself, and what came
before a fault that ends the read is still audited.

The server is a fake MLflow 3 on loopback (tests/hostile_backend_kit.py): the experiment
lookup, the trace search (two traces a page, oldest first, page tokens) and batchGet.
Three sessions of one trace each: conv-a and conv-b on search page 1, conv-c on page 2.
Each test runs ``aem audit --from mlflow://…`` through the command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.backends.mlflow import LATE_ARRIVAL_SECONDS
from tests.hostile_backend_kit import (
    EndlessMlflow,
    FakeMlflow,
    declared,
    deep,
    drip,
    elapsed,
    endless,
    otlp_spans,
    raw,
    weather_session,
)
from tests.scorecards_kit import cli

T0 = 1_776_852_000_000_000_000
HOUR = 3_600 * 10**9
MIB = 1 << 20


@pytest.fixture(autouse=True)
def _no_store_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "default-store.sqlite"))


@pytest.fixture
def mlflow() -> Iterator[FakeMlflow]:
    with FakeMlflow(search_page=2) as fake:
        for n, name in enumerate("abc"):
            fake.store(weather_session(name, f"conv-{name}", T0 + n * HOUR))
        yield fake


def trace_of(fake: FakeMlflow, conversation: str) -> str:
    """The MLflow trace id of a session's trace."""
    [trace_id] = [
        t
        for t, trace in fake.traces.items()
        if any(s.attributes.get("gen_ai.conversation.id") == conversation for s in trace["spans"])
    ]
    return trace_id


def audit(url: str, *options: str) -> tuple[int, dict[str, Any], str, float]:
    (code, out, err), seconds = elapsed(lambda: cli("audit", "--from", url, "--json", *options))
    return code, json.loads(out) if out else {}, " ".join(err.split()), seconds


def sessions(report: dict[str, Any]) -> list[str]:
    return [s["session_id"] for s in report["sessions"]]


def issue(report: dict[str, Any], kind: str) -> dict[str, Any]:
    [found] = [i for i in report["issues"] if i["kind"] == kind]
    return found


def test_a_malformed_trace_record_is_reported_and_the_others_audited(mlflow: FakeMlflow) -> None:
    """``trace_info`` a string ended the whole audit with exit 3."""
    broken = trace_of(mlflow, "conv-b")
    mlflow.broken[broken] = {"trace_info": "oops", "spans": [{}, {}]}
    code, report, err, _ = audit(mlflow.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-c"]
    bad = issue(report, "bad_span")
    assert "'trace_info' is str, not an object" in bad["message"] and bad["spans_skipped"] == 2
    assert "2 spans skipped; the verdicts cover the rest" in err
    assert audit(mlflow.url(), "--strict")[0] == 2


@pytest.mark.parametrize(
    "record",
    [
        "not a trace",
        {"trace_info": {"trace_id": "tr-x"}, "spans": "nope"},
        {"trace_info": {"trace_id": "tr-x"}, "spans": [{"span_id": {"evil": 1}}]},
        {"trace_info": {"trace_id": "tr-x", "tags": {"deep": [[[[]]]]}}, "spans": 7},
    ],
    ids=["string", "spans-string", "poison-id", "spans-int"],
)
def test_other_records_that_are_not_traces_cost_only_themselves(
    mlflow: FakeMlflow, record: Any
) -> None:
    mlflow.broken[trace_of(mlflow, "conv-a")] = record
    code, report, err, _ = audit(mlflow.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-b", "conv-c"]
    assert issue(report, "bad_span")["spans_skipped"] >= 1


def test_a_trace_nested_100000_deep_costs_only_itself(mlflow: FakeMlflow) -> None:
    """batchGet of conv-a and conv-b answers a page too deep to parse: the two are asked
    again one by one, and only conv-b's (still too deep) is skipped."""
    mlflow.hostile[("batch", trace_of(mlflow, "conv-b"))] = raw(deep())
    code, report, err, _ = audit(mlflow.url())  # was: RecursionError, exit 3
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-c"]
    skipped = issue(report, "bad_json")
    assert skipped["trace_id"] == trace_of(mlflow, "conv-b")
    assert "nested more than 1,024 levels deep" in skipped["message"]
    assert audit(mlflow.url(), "--strict")[0] == 2


def test_a_span_nested_too_deep_costs_only_itself(mlflow: FakeMlflow) -> None:
    """Protobuf refuses a span nested past 100 message levels, as for a file's span; the
    trace's other spans are kept."""
    nested: Any = {"string_value": "x"}
    for _ in range(300):  # 900 JSON levels: within the page's 1,024
        nested = {"array_value": {"values": [nested]}}
    trace_id = trace_of(mlflow, "conv-c")
    [good] = [s for s in mlflow.traces[trace_id]["spans"] if not s.parent_span_id]
    [good_raw] = list(otlp_spans([good]))
    mlflow.broken[trace_id] = {
        "trace_info": {"trace_id": trace_id},
        "spans": [good_raw, {**good_raw, "attributes": [{"key": "k", "value": nested}]}],
    }
    code, report, err, _ = audit(mlflow.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b", "conv-c"]
    bad = issue(report, "bad_span")
    assert "span skipped" in bad["message"] and bad["spans_skipped"] == 1
    assert "1 span skipped" in err


def test_a_trace_info_nested_too_deep_is_skipped(mlflow: FakeMlflow) -> None:
    nested: Any = "x"
    for _ in range(200):
        nested = {"n": nested}
    trace_id = trace_of(mlflow, "conv-c")
    mlflow.broken[trace_id] = {"trace_info": {"trace_id": trace_id, "tags": nested}, "spans": []}
    code, report, err, _ = audit(mlflow.url())
    assert code in (0, 1), err
    assert sessions(report) == ["conv-a", "conv-b"]
    assert "nested more than 128 levels deep" in issue(report, "bad_span")["message"]


def test_a_huge_trace_is_refused_unread_and_costs_only_itself(mlflow: FakeMlflow) -> None:
    mlflow.hostile[("batch", trace_of(mlflow, "conv-a"))] = declared(1 << 30)
    code, report, err, seconds = audit(mlflow.url())
    assert code in (0, 1), err
    assert seconds < 30 and mlflow.sent < 48 * MIB
    assert sessions(report) == ["conv-b", "conv-c"]
    assert "it declares 1,073,741,824" in issue(report, "record_too_large")["message"]


def test_an_endless_search_page_ends_the_read_and_page_1_is_audited(mlflow: FakeMlflow) -> None:
    mlflow.hostile[("search", 2)] = endless(b'{"traces": [')
    code, report, err, seconds = audit(mlflow.url(max_page_bytes=MIB))
    assert code in (0, 1), err
    assert seconds < 30 and mlflow.sent < MIB + 32 * MIB
    assert sessions(report) == ["conv-a", "conv-b"]
    stop = issue(report, "unreadable")
    assert stop["source"].endswith("/agents search page 2")
    assert "larger than 1,048,576 bytes (max_page_bytes" in stop["message"]
    assert "after 1 page(s) and 10 record(s)" in stop["message"]
    assert audit(mlflow.url(max_page_bytes=MIB), "--strict")[0] == 2


def test_a_drip_ends_at_the_request_deadline(mlflow: FakeMlflow) -> None:
    mlflow.hostile[("batch", trace_of(mlflow, "conv-c"))] = drip(0.5)
    code, report, err, seconds = audit(mlflow.url(request_seconds=2))
    assert code in (0, 1), err
    assert seconds < 15
    assert sessions(report) == ["conv-a", "conv-b"]
    assert "no whole answer within 2 s" in issue(report, "unreadable")["message"]


@pytest.mark.parametrize(
    ("token", "said"),
    [
        (lambda page, real: 2, "'next_page_token' is not a string (got int '2')"),
        (lambda page, real: "same", "'next_page_token' 'same' was already followed"),
    ],
    ids=["integer", "repeating"],
)
def test_a_page_token_that_cannot_end_ends_the_read(
    mlflow: FakeMlflow, token: Any, said: str
) -> None:
    mlflow.next_token = token
    code, report, err, seconds = audit(mlflow.url())
    assert code in (0, 1), err
    assert seconds < 30
    searches = [r for r in mlflow.requests if r["path"].endswith("/traces/search")]
    assert len(searches) <= 2
    assert sessions(report)[:2] == ["conv-a", "conv-b"]
    assert said in issue(report, "unreadable")["message"]


def test_search_pages_without_end_stop_at_max_pages(mlflow: FakeMlflow) -> None:
    fresh = iter(range(10**9))
    mlflow.next_token = lambda page, real: real or f"more-{next(fresh)}"
    code, report, err, _ = audit(mlflow.url(max_pages=4))
    assert code in (0, 1), err
    assert len([r for r in mlflow.requests if r["path"].endswith("/traces/search")]) == 4
    assert sessions(report) == ["conv-a", "conv-b", "conv-c"]
    assert "more pages than 4 (max_pages)" in issue(report, "unreadable")["message"]


def test_bounds_and_the_overlap_are_url_settings() -> None:
    from collectors.backends import open_source

    source = open_source(
        "mlflow://h:5000/exp?max_page_bytes=1024&request_seconds=1.5&max_pages=3"
        "&late_arrival_seconds=60",
        {},
    )
    limits = source.rest.limits  # type: ignore[attr-defined]
    assert (limits.max_page_bytes, limits.request_seconds, limits.max_pages) == (1024, 1.5, 3)
    assert source.late_arrival_nanos == 60 * 10**9  # type: ignore[attr-defined]
    default = open_source("mlflow://h:5000/exp", {})
    assert default.late_arrival_nanos == LATE_ARRIVAL_SECONDS * 10**9  # type: ignore[attr-defined]
    code, _, err, _ = audit("mlflow://127.0.0.1:1/exp?page=2")
    assert code == 2 and "mlflow: unknown URL parameter(s) page" in err


@pytest.mark.parametrize(
    ("bound", "said"),
    [
        ({"max_spans": 300}, "spans, the most one read keeps (max_spans)"),
        ({"max_bytes": 400_000}, "bytes received, the most one read takes (max_bytes)"),
        ({"max_seconds": 3}, "the longest one read takes (max_seconds)"),
    ],
    ids=["spans", "bytes", "seconds"],
)
def test_a_search_that_pages_for_ever_ends_at_the_whole_reads_bound(
    bound: dict[str, int], said: str
) -> None:
    """Was: a new page of 100 traces for ever read 82,700 traces and 2 GB in 600 s, still
    within max_pages; the read as a whole is bounded, and what it read is audited."""
    with EndlessMlflow(search_page=20) as endless_search:
        code, report, err, seconds = audit(endless_search.url(**bound))
    assert code in (0, 1), err
    assert seconds < 60 and len(report["sessions"]) >= 1
    message = issue(report, "unreadable")["message"]
    assert said in message and "the rest of the source was not read" in message
    assert "skipped; the verdicts cover the rest" in err
    if "max_spans" in bound:
        assert 300 <= report["spans_read"] < 300 + 10 * 6  # one batchGet group past it at most
