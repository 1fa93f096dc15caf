"""A pull from a real Phoenix right after the agent's spans were sent (issue: 132 of 429
spans read, exit 0). Phoenix stores what it receives through an insert queue; the pull's
default ``--settle`` must read on until every span sent is in the report, each once."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from aem.foundation.model import SpanRecord
from tests.hostile_backend_kit import weather_session
from tests.phoenix_kit import Phoenix, running_phoenix, wait_for
from tests.scorecards_kit import cli
from tests.serve.sender import to_readable

pytestmark = pytest.mark.slow
PROJECT = "fresh"


def _send(phoenix: Phoenix, spans: list[SpanRecord]) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{phoenix.base}/v1/traces", timeout=30)
    project = {"openinference.project.name": PROJECT}
    readable = [to_readable(replace(s, resource={**s.resource, **project})) for s in spans]
    for start in range(0, len(readable), 100):
        assert exporter.export(readable[start : start + 100]) is SpanExportResult.SUCCESS
    exporter.shutdown()


def _stored(phoenix: Phoenix) -> int:
    try:
        return len(phoenix.spans(PROJECT))
    except httpx.HTTPStatusError:  # the project appears with its first span
        return 0


def test_a_pull_right_after_sending_reads_every_span_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "store.sqlite"))
    with running_phoenix(tmp_path / "phoenix") as phoenix:
        # The run before, two minutes ago, stored: the project exists and is in use (a
        # pull of a project Phoenix does not know yet is a 404, a different matter).
        _send(phoenix, weather_session("old", "conv-old", time.time_ns() - 120 * 10**9))
        assert wait_for(lambda: _stored(phoenix), lambda n: n == 5) == 5
        fresh = [
            s
            for n in range(60)
            for s in weather_session(f"new{n}", f"conv-new{n}", time.time_ns() - 2 * 10**9)
        ]
        _send(phoenix, fresh)
        code, out, err = cli("audit", "--from", phoenix.url(PROJECT), "--json", "--strict")
    report = json.loads(out)
    said = " ".join(err.split())
    assert code in (0, 1), said
    assert report["spans_read"] == len(fresh) + 5  # every span sent, none read twice
    assert len(report["sessions"]) == 61
    assert "reading again in" in said and "until the backend settled" in said
    assert "look unfinished" not in said
