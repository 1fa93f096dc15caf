"""What Phoenix's Traces and Sessions lists show of AEM's verdicts, on a real Phoenix.

Three conversations go to one project through the SDK's real OTLP exporter — one whose
answer is a ``suspect`` (``march_refunds``), one with a proven ``root_cause``
(``parallel_tools``), one ``ok`` (``weather_genai``) — dated an hour ago, so Phoenix's
default 7-day lists hold them. ``aem audit --from phoenix://…/PROJECT --sink phoenix``
writes the verdicts; what Phoenix then holds is read back through its REST API, and its
Traces and Sessions lists are opened in Debian's headless Chromium and read as a user
reads them: each row's annotation column shows ``aem.trace`` / ``aem.session`` with the
score of the row's label (1 ok, 0.5 suspect, 0 root cause), and the score charts plot
them. The screenshots are kept beside the test's files.

Then the same session id in two projects, audited one after the other: Phoenix keeps one
session for both, and each project's ``aem.session`` annotation stays (keyed
``aem@PROJECT``), where the second audit once overwrote the first.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aem.report.browser import chromium_path, headless_chromium
from aem.sinks.delivery import audit_sinks
from aem.sinks.phoenix import PhoenixSink
from aem.sinks.rollup import LABEL_SCORES
from bench.backends.scaled import renamed
from tests.collectors.test_phoenix_backend import as_sdk, await_spans, export, sample_spans
from tests.phoenix_kit import Phoenix, running_phoenix
from tests.scorecards_kit import cli
from tests.serve.conftest import SAMPLES

pytestmark = pytest.mark.slow

PROJECT = "lists"
# sample file → (its agent's root span name, the label its one session gets)
SAMPLE_LABELS = {
    "march_refunds": ("invoke_agent refunds_agent", "suspect"),
    "parallel_tools": ("invoke_agent trip_planner", "root_cause"),
    "weather_genai": ("invoke_agent weather_agent", "ok"),
}
LOAD_MS = 120_000


def _recent(sample: str, seed: str, conversation: str) -> list[Any]:
    """A sample's spans under new ids and ``conversation``, started an hour ago."""
    spans = sample_spans([str(SAMPLES / f"{sample}.otlp.jsonl")])
    shift = time.time_ns() - 3_600 * 10**9 - min(s.start_unix_nano for s in spans)
    return renamed(spans, seed, conversation=conversation, shift_ns=shift)


def _audit_to_phoenix(phoenix: Phoenix, project: str, work: Path) -> dict[str, Any]:
    """``aem audit --from phoenix://…/project --sink phoenix --json``, the report; the
    sink's table names no project (the audit takes it from the URL)."""
    config = work / f"{project}.toml"
    config.write_text(f'[sinks.phoenix]\nurl = "{phoenix.base}"\n')
    args = ("audit", "--from", phoenix.url(project), "--config", str(config), "--sink", "phoenix")
    code, out, err = cli(*args, "--json")
    assert code == 1, err  # a root cause was found
    assert "sink phoenix:" in err
    report: dict[str, Any] = json.loads(out)
    return report


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
        yield server


@pytest.fixture(scope="module")
def listed(phoenix: Phoenix, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The three conversations in Phoenix, audited with the Phoenix sink: the report's
    sessions by session id."""
    spans = [
        s
        for sample in SAMPLE_LABELS
        for s in _recent(sample, f"{PROJECT}-{sample}", f"{PROJECT}-{sample}")
    ]
    export(phoenix, as_sdk(spans, PROJECT))
    await_spans(phoenix, PROJECT, len(spans))
    report = _audit_to_phoenix(phoenix, PROJECT, tmp_path_factory.mktemp("lists"))
    sessions = {s["session_id"]: s for s in report["sessions"]}
    assert {sid: _session_label(s) for sid, s in sessions.items()} == {
        f"{PROJECT}-{sample}": label for sample, (_, label) in SAMPLE_LABELS.items()
    }
    return sessions


def _session_label(session: dict[str, Any]) -> str:
    labels = {t["label"] for t in session["turns"]}
    order = ("root_cause", "prior_action_failed", "suspect")
    return next((label for label in order if label in labels), "ok")


def _ours(phoenix: Phoenix, project: str, level: str, ids: list[str]) -> list[dict[str, Any]]:
    """AEM's annotations (identifier ``aem`` or ``aem@…``) of traces or sessions."""
    param = {"trace": "trace_ids", "session": "session_ids"}[level]
    body = phoenix.get(f"/v1/projects/{project}/{level}_annotations", **{param: ids}, limit=1000)
    return [a for a in body["data"] if re.fullmatch(r"aem(@.+)?", a["identifier"])]


def test_trace_and_session_annotations_carry_the_labels_score(
    phoenix: Phoenix, listed: dict[str, Any]
) -> None:
    traces = {t: s for s in listed.values() for t in s["trace_ids"]}
    notes = _ours(phoenix, PROJECT, "trace", list(traces))
    assert sorted(n["trace_id"] for n in notes) == sorted(traces)  # one per trace
    for note in notes:
        session = traces[note["trace_id"]]
        in_trace = [t for t in session["turns"] if t["trace_id"] == note["trace_id"]]
        label = _session_label({"turns": in_trace})
        assert note["name"] == "aem.trace"
        assert (note["result"]["label"], note["result"]["score"]) == (label, LABEL_SCORES[label])
        assert note["metadata"]["project"] == PROJECT
    # A trace holding the session's suspect or root cause never reads ok, nor scores 1.
    flagged = {
        t["trace_id"]
        for s in listed.values()
        for t in s["turns"]
        if t["label"] in ("suspect", "root_cause")
    }
    assert len(flagged) == 2
    for note in notes:
        if note["trace_id"] in flagged:
            assert note["result"]["label"] != "ok" and note["result"]["score"] < 1

    sessions = _ours(phoenix, PROJECT, "session", list(listed))
    assert sorted(n["session_id"] for n in sessions) == sorted(listed)
    for note in sessions:
        label = _session_label(listed[note["session_id"]])
        assert (note["result"]["label"], note["result"]["score"]) == (label, LABEL_SCORES[label])
        assert note["identifier"] == f"aem@{PROJECT}"
        assert note["result"]["explanation"].startswith(f"[{PROJECT}] ")

    # Each turn's own label on its span carries its score too.
    [root_session] = [s for s in listed.values() if _session_label(s) == "root_cause"]
    spans = [t["span_ids"][0] for t in root_session["turns"]]
    body = phoenix.get(f"/v1/projects/{PROJECT}/span_annotations", span_ids=spans, limit=1000)
    labels = {a["span_id"]: a["result"] for a in body["data"] if a["name"] == "aem.label"}
    for turn in root_session["turns"]:
        result = labels[turn["span_ids"][0]]
        assert (result["label"], result["score"]) == (turn["label"], LABEL_SCORES[turn["label"]])


def _list_rows(page: Any, base: str, project_id: str, tab: str, shot: Path) -> str:
    """The text of a project's Traces or Sessions list once its annotation scores show."""
    page.goto(f"{base}/projects/{project_id}/{tab}")
    page.wait_for_selector("tbody tr >> text=μ", timeout=LOAD_MS)
    page.screenshot(path=str(shot), full_page=True)
    text: str = page.inner_text("body")
    return text


def _row(page: Any, has_text: str) -> str:
    rows = page.locator("tbody tr", has_text=has_text)
    assert rows.count() == 1, has_text
    text: str = rows.first.inner_text()
    return text.replace("\xa0", " ")  # Phoenix writes "μ 0.50" with a no-break space


def test_phoenix_traces_and_sessions_lists_show_the_scores(
    phoenix: Phoenix, listed: dict[str, Any], tmp_path: Path
) -> None:
    if chromium_path() is None and not os.environ.get("CI"):
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    projects = phoenix.get("/v1/projects")["data"]
    [project_id] = [p["id"] for p in projects if p["name"] == PROJECT]
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        traces = _list_rows(page, phoenix.base, project_id, "traces", tmp_path / "traces.png")
        assert "Trace annotation scores" in traces and "aem.trace" in traces
        for root_span, label in SAMPLE_LABELS.values():
            row = _row(page, root_span)
            assert "aem.trace" in row
            assert f"μ {LABEL_SCORES[label]:.2f}" in row, (label, row)
        sessions = _list_rows(page, phoenix.base, project_id, "sessions", tmp_path / "sessions.png")
        assert "Session annotation scores" in sessions and "aem.session" in sessions
        for sample, (_, label) in SAMPLE_LABELS.items():
            row = _row(page, f"{PROJECT}-{sample}")
            assert "aem.session" in row
            assert f"μ {LABEL_SCORES[label]:.2f}" in row, (label, row)
    for shot in ("traces.png", "sessions.png"):
        assert (tmp_path / shot).stat().st_size > 10_000


def test_a_session_id_two_projects_share_keeps_one_annotation_per_project(
    phoenix: Phoenix, tmp_path: Path
) -> None:
    shared = "shared-conversation"
    first = _recent("parallel_tools", "shared-a", shared)  # a root cause
    second = _recent("weather_genai", "shared-b", shared)  # ok
    export(phoenix, as_sdk(first, "shared-a"))
    await_spans(phoenix, "shared-a", len(first))
    export(phoenix, as_sdk(second, "shared-b"))
    await_spans(phoenix, "shared-b", len(second))

    _audit_to_phoenix(phoenix, "shared-a", tmp_path)
    config = tmp_path / "b.toml"
    config.write_text(f'[sinks.phoenix]\nurl = "{phoenix.base}"\n')
    code, _, err = cli(
        "audit", "--from", phoenix.url("shared-b"), "--config", str(config), "--sink", "phoenix"
    )
    assert code == 0, err

    # Phoenix files the session under the project that sent it first; both audits' notes
    # are on it, each under its project's identifier, neither overwritten.
    notes = _ours(phoenix, "shared-a", "session", [shared])
    by_project = {n["metadata"]["project"]: n for n in notes}
    assert sorted(n["identifier"] for n in notes) == ["aem@shared-a", "aem@shared-b"]
    assert by_project["shared-a"]["result"]["label"] == "root_cause"
    assert by_project["shared-b"]["result"]["label"] == "ok"
    assert by_project["shared-b"]["result"]["explanation"].startswith("[shared-b] no failure")
    assert by_project["shared-a"]["result"]["score"] == 0.0
    assert by_project["shared-b"]["result"]["score"] == 1.0

    _audit_to_phoenix(phoenix, "shared-a", tmp_path)  # again: updated in place, none added
    again = _ours(phoenix, "shared-a", "session", [shared])
    assert sorted(a["id"] for a in again) == sorted(n["id"] for n in notes)


def test_the_project_comes_from_the_one_phoenix_source_unless_configured() -> None:
    """What ``aem audit`` gives the Phoenix sink: the project of its one Phoenix
    ``--from``; none with two (whose sessions would be which?) or none; a configured
    project always wins."""
    table = {"phoenix": {"url": "http://127.0.0.1:9"}}

    def project(sources: list[str], **more: str) -> str | None:
        [sink] = audit_sinks(["phoenix"], {"phoenix": {**table["phoenix"], **more}}, sources)
        assert isinstance(sink, PhoenixSink)
        sink.close()
        return sink.project

    assert project(["phoenix://127.0.0.1:6006/agents"]) == "agents"
    assert project(["phoenix+https://phoenix.example/agents/"]) == "agents"
    assert project(["phoenix://127.0.0.1:6006"]) == "default"
    assert project(["phoenix://h:1/a", "phoenix://h:1/b"]) is None
    assert project(["mlflow://127.0.0.1:5000/1"]) is None
    assert project([]) is None
    assert project(["phoenix://h:1/a"], project="mine") == "mine"
