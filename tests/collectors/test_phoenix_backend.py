"""``aem audit --from phoenix://…`` against a real Phoenix server, end to end.

The agent's spans reach Phoenix through the SDK's real OTLP/HTTP exporter; the same SDK
spans are written to a file by AEM's OTLP-JSON file exporter. What the audit reads back
from Phoenix must give the report the file gives, byte for byte. Then: the time window,
the incremental ledger (``--since last``), verdicts as annotations (``--sink phoenix``, one
per turn even where turns share a span, re-runs replacing only AEM's own), and
evaluation spans in a trace of their own (``--sink otlp``: the agent's trace keeps its
duration in Phoenix). One Phoenix serves the module, each test in its own project.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from aem_record import OtlpJsonFileExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from aem.foundation.model import SpanRecord
from bench.backends.scaled import renamed
from collectors.readers import find_trace_files, read_batches
from tests.phoenix_kit import Phoenix, running_phoenix, wait_for
from tests.scorecards_kit import cli
from tests.serve.conftest import ROOT, SAMPLES
from tests.serve.sender import to_readable

pytestmark = pytest.mark.slow

SAMPLE_FILES = sorted(str(p) for p in SAMPLES.glob("*.otlp.jsonl"))
HOUR_NS = 3_600 * 1_000_000_000


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


def sample_spans(paths: list[str]) -> list[SpanRecord]:
    files, _ = find_trace_files(paths)
    return [s for f in files for batch in read_batches(f) for s in batch.spans]


def as_sdk(spans: list[SpanRecord], project: str) -> list[ReadableSpan]:
    """Decoded spans as SDK spans, each resource naming the Phoenix project."""
    return [
        to_readable(replace(s, resource={**s.resource, "openinference.project.name": project}))
        for s in spans
    ]


def export(phoenix: Phoenix, spans: list[ReadableSpan], file: Path | None = None) -> None:
    """The same SDK spans to Phoenix (real OTLP/HTTP exporter) and, if asked, to a file."""
    exporter = OTLPSpanExporter(endpoint=f"{phoenix.base}/v1/traces", timeout=30)
    for start in range(0, len(spans), 200):
        assert exporter.export(spans[start : start + 200]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    if file is not None:
        recorder = OtlpJsonFileExporter(file)
        assert recorder.export(spans) is SpanExportResult.SUCCESS
        recorder.shutdown()


def await_spans(phoenix: Phoenix, project: str, count: int) -> list[dict[str, Any]]:
    def fetch() -> list[dict[str, Any]]:
        try:
            return phoenix.spans(project)
        except httpx.HTTPStatusError:  # the project appears with its first span
            return []

    got = wait_for(fetch, lambda found: len(found) >= count, 60)
    assert len(got) >= count, f"Phoenix holds {len(got)} of {count} spans in {project}"
    return got


def test_the_report_from_phoenix_is_the_report_from_the_file(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    spans = sample_spans(SAMPLE_FILES)
    recorded = tmp_path / "recorded.otlp.jsonl"
    export(phoenix, as_sdk(spans, "same"), recorded)
    await_spans(phoenix, "same", len(spans))

    code, from_file, _ = cli("audit", str(recorded), "--json")
    assert code == 1 and json.loads(from_file)["spans_read"] == len(spans)
    for url in (phoenix.url("same"), phoenix.url("same", page_size=7)):  # 1 page, many pages
        code_b, from_phoenix, err = cli("audit", "--from", url, "--json")
        assert (code_b, err) == (code, "")
        assert from_phoenix == from_file


def test_since_and_until_select_spans_by_start_time(phoenix: Phoenix, tmp_path: Path) -> None:
    by_file = {path: renamed(sample_spans([path]), "window") for path in SAMPLE_FILES}
    export(phoenix, as_sdk([s for ss in by_file.values() for s in ss], "window"))
    await_spans(phoenix, "window", sum(map(len, by_file.values())))
    ranges = {
        p: (min(s.start_unix_nano for s in ss), max(s.start_unix_nano for s in ss))
        for p, ss in by_file.items()
    }
    path, (first, last) = next(
        (p, r)
        for p, r in ranges.items()
        if all(o[1] < r[0] or o[0] > r[1] for q, o in ranges.items() if q != p)
    )
    since = _iso(first)
    until = _iso(last + 1000)
    alone_file = tmp_path / "alone.otlp.jsonl"
    recorder = OtlpJsonFileExporter(alone_file)
    recorder.export(as_sdk(by_file[path], "window"))
    recorder.shutdown()
    code, alone, _ = cli("audit", str(alone_file), "--json")
    code_b, windowed, _ = cli(
        "audit", "--from", phoenix.url("window"), "--since", since, "--until", until, "--json"
    )
    assert (code_b, windowed) == (code, alone)

    code, _, err = cli("audit", "--from", phoenix.url("window"), "--until", "2000-01-01T00:00:00")
    assert code == 2 and "no spans could be read" in err
    code, _, err = cli("audit", "--from", phoenix.url("window"), "--since", "yesterday")
    assert code == 2 and "--since 'yesterday' is not an ISO-8601 time" in err


def _iso(unix_nano: int) -> str:
    from collectors.backends.phoenix import iso

    return iso(unix_nano)


def test_since_last_evaluates_only_what_is_new_or_changed(phoenix: Phoenix, tmp_path: Path) -> None:
    weather = sample_spans([str(SAMPLES / "weather_genai.otlp.jsonl")])
    store = str(tmp_path / "aem.sqlite")
    url = phoenix.url("incr")

    def run() -> tuple[int, dict[str, Any], str]:
        code, out, err = cli("audit", "--from", url, "--since", "last", "--store", store, "--json")
        return code, json.loads(out), err

    def ids(report: dict[str, Any]) -> list[str]:
        return [s["session_id"] for s in report["sessions"]]

    sent = renamed(weather, "a1", conversation="conv-a", shift_ns=0) + renamed(
        weather, "b1", conversation="conv-b", shift_ns=HOUR_NS
    )
    export(phoenix, as_sdk(sent, "incr"))
    await_spans(phoenix, "incr", len(sent))
    code, report, _ = run()
    assert code == 0 and ids(report) == ["conv-a", "conv-b"]

    code, report, err = run()  # nothing new: nothing evaluated, and it says so
    assert (code, ids(report)) == (0, []) and "nothing to evaluate" in err

    export(
        phoenix, as_sdk(renamed(weather, "c1", conversation="conv-c", shift_ns=2 * HOUR_NS), "incr")
    )
    await_spans(phoenix, "incr", 3 * len(weather))
    code, report, _ = run()
    assert ids(report) == ["conv-c"]

    # conv-a gains a second trace: it is evaluated again, whole, and its row replaced.
    export(
        phoenix, as_sdk(renamed(weather, "a2", conversation="conv-a", shift_ns=3 * HOUR_NS), "incr")
    )
    await_spans(phoenix, "incr", 4 * len(weather))
    code, report, _ = run()
    assert ids(report) == ["conv-a"]
    [grown] = report["sessions"]
    assert len(grown["trace_ids"]) == 2 and report["spans_read"] >= 2 * len(weather)
    rows = (
        sqlite3.connect(store)
        .execute("SELECT session_id, spans FROM pull_sessions ORDER BY session_id")
        .fetchall()
    )
    assert rows == [
        ("conv-a", 2 * len(weather)),
        ("conv-b", len(weather)),
        ("conv-c", len(weather)),
    ]
    assert run()[1]["sessions"] == []


def test_since_last_reads_late_and_future_sessions_once(phoenix: Phoenix, tmp_path: Path) -> None:
    """A conversation that reaches Phoenix after a run but started before what that run
    read, and one dated 2099, are each evaluated once, and the 2099 one does not stop
    later runs: ``--since last`` follows what Phoenix stored (its span ids), not start
    times."""
    weather = sample_spans([str(SAMPLES / "weather_genai.otlp.jsonl")])
    store = str(tmp_path / "aem.sqlite")
    url = phoenix.url("late")
    sent = 0

    def arrive(seed: str, shift_ns: int) -> None:
        nonlocal sent
        spans = renamed(weather, seed, conversation=f"late-{seed}", shift_ns=shift_ns)
        export(phoenix, as_sdk(spans, "late"))
        sent += len(spans)
        await_spans(phoenix, "late", sent)

    def run() -> tuple[list[str], list[dict[str, Any]]]:
        code, out, err = cli("audit", "--from", url, "--since", "last", "--store", store, "--json")
        assert code in (0, 1), err
        report = json.loads(out)
        return sorted(s["session_id"] for s in report["sessions"]), report["issues"]

    arrive("on-time", 2 * HOUR_NS)
    assert run()[0] == ["late-on-time"]
    arrive("early", 0)  # started two hours before the span the last run read
    year_2099 = 4_070_908_800 * 10**9 - min(s.start_unix_nano for s in weather)
    arrive("future", year_2099)
    found, issues = run()
    assert found == ["late-early", "late-future"]
    assert sum(i["kind"] == "future_start" for i in issues) == len(weather)
    arrive("next", HOUR_NS)  # after the 2099 spans were read, and started before them
    assert run()[0] == ["late-next"]
    assert run()[0] == []


def _shared_span_session(seed: str) -> list[SpanRecord]:
    """One model call whose text and two tool calls are three turns on one span."""
    trace = hashlib.sha256(seed.encode()).hexdigest()[:32]
    root, chat = (hashlib.sha256(f"{seed}{n}".encode()).hexdigest()[:16] for n in "rc")
    output = [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "I will look up the weather in Paris and Rome."},
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "get_weather",
                    "arguments": {"city": "Paris"},
                },
                {
                    "type": "tool_call",
                    "id": "c2",
                    "name": "get_weather",
                    "arguments": {"city": "Rome"},
                },
            ],
            "finish_reason": "tool_calls",
        }
    ]
    asked = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Rome?"}]}]
    t0 = 1_776_000_000_000_000_000
    common = {"gen_ai.conversation.id": f"shared-{seed}"}
    return [
        SpanRecord(
            trace,
            root,
            None,
            "invoke_agent a",
            1,
            t0,
            t0 + 10**9,
            attributes={
                **common,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "a",
            },
        ),
        SpanRecord(
            trace,
            chat,
            root,
            "chat m",
            3,
            t0 + 10**6,
            t0 + 5 * 10**8,
            attributes={
                **common,
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(asked),
                "gen_ai.output.messages": json.dumps(output),
            },
        ),
    ]


def _annotations(phoenix: Phoenix, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    body = phoenix.get(f"/v1/projects/{project}/span_annotations", span_ids=span_ids, limit=1000)
    return list(body["data"])


def test_verdicts_become_annotations_one_per_turn_and_reruns_replace_only_ours(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    parallel = renamed(sample_spans([str(SAMPLES / "parallel_tools.otlp.jsonl")]), "annot")
    spans = parallel + _shared_span_session("s1")
    export(phoenix, as_sdk(spans, "annot"))
    await_spans(phoenix, "annot", len(spans))
    config = tmp_path / "aem.toml"
    config.write_text(f'[sinks.phoenix]\nurl = "{phoenix.base}"\n')
    args = ("audit", "--from", phoenix.url("annot"), "--config", str(config), "--sink", "phoenix")
    code, out, err = cli(*args, "--json")
    assert code == 1, err
    assert "sink phoenix:" in err
    report = json.loads(out)
    turns = [(s, t) for s in report["sessions"] for t in s["turns"]]
    span_ids = sorted({t["span_ids"][0] for _, t in turns})

    # Someone else's annotation on a span AEM annotates too: a re-run must leave it.
    theirs = {
        "span_id": span_ids[0],
        "name": "aem.label",
        "annotator_kind": "HUMAN",
        "result": {"label": "looks fine"},
        "identifier": "reviewer-1",
    }
    posted = httpx.post(
        f"{phoenix.base}/v1/span_annotations",
        params={"sync": "true"},
        json={"data": [theirs]},
        timeout=30,
    )
    assert posted.status_code == 200, posted.text
    first = _annotations(phoenix, "annot", span_ids)
    assert cli(*args)[0] == 1  # the re-run
    again = _annotations(phoenix, "annot", span_ids)
    key = lambda a: (a["span_id"], a["name"], a["identifier"])  # noqa: E731
    assert sorted(map(key, again)) == sorted(map(key, first))  # replaced, none added
    assert len(set(map(key, again))) == len(again)
    assert [a["result"]["label"] for a in again if a["identifier"] == "reviewer-1"] == [
        "looks fine"
    ]

    # Every turn's label survives, on its own span or, shared, under its own identifier.
    labels = {
        (a["span_id"], a["identifier"]): a["result"]["label"]
        for a in again
        if a["name"] == "aem.label" and a["identifier"] != "reviewer-1"
    }
    shared = next(s for s, _ in turns if s["session_id"] == "shared-s1")
    assert len({t["span_ids"][0] for t in shared["turns"]}) == 1 and len(shared["turns"]) == 3
    for session, turn in turns:
        on_span = [t for t in session["turns"] if t["span_ids"][0] == turn["span_ids"][0]]
        identifier = "aem" if len(on_span) == 1 else f"aem:{turn['turn_id']}"
        assert labels[(turn["span_ids"][0], identifier)] == turn["label"], (
            session["session_id"],
            turn,
        )
        for metric in turn["metrics"]:
            found = [
                a
                for a in again
                if (a["span_id"], a["name"], a["identifier"])
                == (turn["span_ids"][0], metric["name"], identifier)
            ]
            assert [a["result"]["label"] for a in found] == [metric["outcome"]]


_PRECEDENCE = ("root_cause", "prior_action_failed", "suspect")


def _expected_label(turns: list[dict[str, Any]]) -> str:
    labels = {t["label"] for t in turns}
    return next((label for label in _PRECEDENCE if label in labels), "ok")


def _listed(phoenix: Phoenix, project: str, level: str, ids: list[str]) -> list[dict[str, Any]]:
    param = {"trace": "trace_ids", "session": "session_ids"}[level]
    body = phoenix.get(f"/v1/projects/{project}/{level}_annotations", **{param: ids}, limit=1000)
    # a session's annotation is keyed by the project the audit read (``aem@PROJECT``)
    return [a for a in body["data"] if a["identifier"] in ("aem", f"aem@{project}")]


def test_sessions_and_traces_get_their_verdicts_and_reruns_update_them(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    """Phoenix's trace list and sessions tab show AEM's label without opening a trace:
    one ``aem.trace`` annotation per trace, one ``aem.session`` per session (Phoenix
    makes its sessions of ``gen_ai.conversation.id`` too), naming the root-cause turn and
    metric; a re-run updates them in place."""
    # Session ids of their own: Phoenix's session ids span projects, and other tests of this
    # module send the same samples to other projects.
    planner_spans = sample_spans([str(SAMPLES / "parallel_tools.otlp.jsonl")])
    one = renamed(planner_spans, "levels", conversation="levels-planner")
    weather = sample_spans([str(SAMPLES / "weather_genai.otlp.jsonl")])
    two_runs = [  # one session of two traces
        *renamed(weather, "levels-a", conversation="levels-two-runs"),
        *renamed(weather, "levels-b", conversation="levels-two-runs", shift_ns=HOUR_NS // 60),
    ]
    export(phoenix, as_sdk(one + two_runs, "levels"))
    await_spans(phoenix, "levels", len(one) + len(two_runs))
    config = tmp_path / "aem.toml"
    config.write_text(f'[sinks.phoenix]\nurl = "{phoenix.base}"\n')
    args = ("audit", "--from", phoenix.url("levels"), "--config", str(config), "--sink", "phoenix")
    code, out, err = cli(*args, "--json")
    assert code == 1, err
    sessions = {s["session_id"]: s for s in json.loads(out)["sessions"]}
    assert sessions["levels-planner"]["session_key"] == "gen_ai.conversation.id"
    assert len(sessions["levels-two-runs"]["trace_ids"]) == 2
    traces = sorted(t for s in sessions.values() for t in s["trace_ids"])

    first = _listed(phoenix, "levels", "trace", traces)
    assert sorted(a["trace_id"] for a in first) == traces  # one per trace
    by_trace = {a["trace_id"]: a for a in first}
    for session in sessions.values():
        for trace in session["trace_ids"]:
            note = by_trace[trace]
            in_trace = [t for t in session["turns"] if t["trace_id"] == trace]
            assert (note["name"], note["result"]["label"]) == (
                "aem.trace",
                _expected_label(in_trace),
            )
            assert note["metadata"]["session_id"] == session["session_id"]
            assert note["metadata"]["session_label"] == _expected_label(session["turns"])

    planner = sessions["levels-planner"]
    [root] = [t for t in planner["turns"] if t["label"] == "root_cause"]
    failed = [m["name"] for m in root["metrics"] if m["outcome"] == "fail"]
    note = by_trace[planner["trace_ids"][0]]
    assert note["result"]["label"] == "root_cause"
    assert note["metadata"]["root_cause_turn_id"] == root["turn_id"]
    assert note["metadata"]["root_cause_metrics"] == failed
    assert f"root cause: turn {root['turn_id']}" in note["result"]["explanation"]
    assert failed[0] in note["result"]["explanation"]

    notes = _listed(phoenix, "levels", "session", list(sessions))
    assert sorted(n["session_id"] for n in notes) == sorted(sessions)
    for session_note in notes:
        session = sessions[session_note["session_id"]]
        assert session_note["name"] == "aem.session"
        assert session_note["result"]["label"] == _expected_label(session["turns"])
    [session_note] = [n for n in notes if n["session_id"] == "levels-planner"]
    assert session_note["metadata"]["root_cause_turn_id"] == root["turn_id"]
    assert session_note["result"]["explanation"] == f"[levels] {note['result']['explanation']}"

    assert cli(*args)[0] == 1  # re-delivered: the same annotations, updated, none added
    again = _listed(phoenix, "levels", "trace", traces)
    assert sorted(a["id"] for a in again) == sorted(a["id"] for a in first)
    again_sessions = _listed(phoenix, "levels", "session", list(sessions))
    assert sorted(a["id"] for a in again_sessions) == sorted(n["id"] for n in notes)


def test_evaluation_spans_keep_out_of_the_agents_trace(phoenix: Phoenix, tmp_path: Path) -> None:
    spans = renamed(sample_spans([str(SAMPLES / "parallel_tools.otlp.jsonl")]), "own")
    export(phoenix, as_sdk(spans, "own-trace"))
    agent = await_spans(phoenix, "own-trace", len(spans))
    [trace_id] = {s["context"]["trace_id"] for s in agent}
    traces_path = "/v1/projects/own-trace/traces"

    def trace_times() -> tuple[str, str]:
        [found] = [
            t for t in phoenix.get(traces_path, limit=100)["data"] if t["trace_id"] == trace_id
        ]
        return found["start_time"], found["end_time"]

    before = trace_times()
    config = tmp_path / "aem.toml"
    config.write_text(
        f'[sinks.otlp]\nendpoint = "{phoenix.base}"\n'
        'protocol = "http/protobuf"\nsignals = "spans"\n'
    )
    code, out, err = cli(
        "audit",
        "--from",
        phoenix.url("own-trace"),
        "--config",
        str(config),
        "--sink",
        "otlp",
        "--json",
    )
    assert code == 1, err
    turns = [t for s in json.loads(out)["sessions"] for t in s["turns"]]
    # The evaluation spans land in the default project (their resource names none).
    evaluations = wait_for(
        lambda: [
            s
            for s in phoenix.spans("default")
            if s["name"].startswith("evaluate ")
            and s["attributes"].get("aem.evaluated_trace_id") == trace_id
        ],
        lambda got: len(got) >= len(turns),
        60,
    )
    assert len(evaluations) == len(turns)
    assert {s["attributes"]["aem.evaluated_span_id"] for s in evaluations} == {
        t["span_ids"][0] for t in turns
    }
    assert all(s["context"]["trace_id"] != trace_id and s["parent_id"] is None for s in evaluations)
    after = phoenix.spans("own-trace")
    assert sorted(s["context"]["span_id"] for s in after) == sorted(
        s["context"]["span_id"] for s in agent
    )
    assert trace_times() == before  # the agent's trace: same spans, same duration


def test_the_guides_pull_steps(
    phoenix: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/integrations/phoenix.md section 2, its blocks as written (port swapped)."""
    guide = (ROOT / "docs" / "integrations" / "phoenix.md").read_text()
    section = guide[guide.index("## 2. Pull") : guide.index("## 3. Live")]
    section = re.sub(r"\b6006\b", str(phoenix.port), section)
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)
    [audit_line, incremental_line] = [shlex.split(b) for lang, b in blocks if lang == "sh"]
    [config] = [b for lang, b in blocks if lang == "toml"]
    assert audit_line[:2] == ["aem", "audit"] and incremental_line[:2] == ["aem", "audit"]

    spans = renamed(sample_spans([str(SAMPLES / "parallel_tools.otlp.jsonl")]), "guide")
    export(phoenix, as_sdk(spans, "default"))
    await_spans(phoenix, "default", len(spans))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "aem.sqlite"))
    (tmp_path / "cases.jsonl").write_text((SAMPLES / "cases.jsonl").read_text())
    (tmp_path / "aem.toml").write_text(config)

    code, out, _ = cli(*audit_line[1:], "--json")
    assert code == 1
    report = json.loads(out)
    [session] = [s for s in report["sessions"] if s["session_id"] == "trip-planner-7"]
    assert session["case_found"] and session["root_causes"]

    code, _, err = cli(*incremental_line[1:])
    assert code == 1, err
    root_span = session["root_causes"][0]["span_ids"][0]
    found = _annotations(phoenix, "default", [root_span])
    assert {a["name"]: a["result"]["label"] for a in found}["aem.label"] == "root_cause"
    code, _, err = cli(*incremental_line[1:])  # from cron, an hour later: nothing new
    assert code == 0 and "nothing to evaluate" in err
