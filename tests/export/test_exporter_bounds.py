"""The recorder never leaves a line AEM cannot read: no half line after a failed write, a
crashed writer's half line ended before the next, no line over the reader's record limit.

Real parts: the SDK pipeline, a file on disk, a write that fails because the process hit
its file-size limit (``RLIMIT_FSIZE``: the kernel refuses the bytes past it, as a full
disk does), and AEM's own reader and ``aem audit`` reading what was written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from aem_record import OtlpJsonFileExporter
from aem_record.otlp_json import MAX_LINE_BYTES, TRUNCATED_KEY
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from collectors.readers import DEFAULT_MAX_RECORD_BYTES, read_batches
from tests.scorecards_kit import cli

# Runs in a process of its own: spans exported one by one until the file-size limit
# refuses one part-way; prints how many exports succeeded and failed.
FULL_DISK = """
import json, resource, signal, sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export import SpanExportResult
from aem_record import OtlpJsonFileExporter

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write is EFBIG, not a kill
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
exporter = OtlpJsonFileExporter(sys.argv[1])
provider = TracerProvider()
tracer = provider.get_tracer("agent")
results = []
for n in range(40):
    with tracer.start_as_current_span(f"execute_tool step-{n}") as span:
        span.set_attribute("gen_ai.tool.name", "lookup")
        span.set_attribute("payload", "x" * 1500)
    results.append(exporter.export([span]) is SpanExportResult.SUCCESS)
print(json.dumps(results))
"""


def _lines(path: Path) -> list[str]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), "the file ends in half a line"
    return data.decode().splitlines()


def test_the_reader_and_the_writer_share_one_record_limit() -> None:
    assert MAX_LINE_BYTES == DEFAULT_MAX_RECORD_BYTES


def test_a_write_refused_part_way_leaves_no_half_line(tmp_path: Path) -> None:
    """Was: the bytes that fitted stayed, a torn line mid-file, against the docstring."""
    path = tmp_path / "traces.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(path)], capture_output=True, text=True, check=True
    )
    results = json.loads(done.stdout)
    fitted, refused = results.count(True), results.count(False)
    assert fitted >= 1 and refused >= 1, results  # some fitted, the rest were refused
    lines = _lines(path)
    assert len(lines) == fitted and path.stat().st_size <= 20_000
    assert all(json.loads(line)["resourceSpans"] for line in lines)
    issues = [i for b in read_batches(str(path)) for i in b.issues]
    assert issues == []


def _record(exporter: OtlpJsonFileExporter, **attributes: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("agent").start_as_current_span("execute_tool lookup") as span:
        for key, value in attributes.items():
            span.set_attribute(key, value)
    provider.shutdown()


def test_a_half_line_a_crash_left_is_ended_before_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    _record(OtlpJsonFileExporter(path), step="first")
    with path.open("ab") as crashed:
        crashed.write(b'{"resourceSpans": [{"scopeSp')  # the process died here
    _record(OtlpJsonFileExporter(path), step="after the crash")
    batches = list(read_batches(str(path)))
    steps = [s.attributes.get("step") for b in batches for s in b.spans]
    assert steps == ["first", "after the crash"]
    [issue] = [i for b in batches for i in b.issues]
    assert issue.line == 2  # the half line, reported; the line after it intact


def test_an_attribute_over_the_record_limit_is_cut_and_said(tmp_path: Path) -> None:
    """Was: a 100 MB attribute written as a line ``aem audit`` then skipped."""
    path = tmp_path / "traces.jsonl"
    limit = 64 * 1024
    _record(
        OtlpJsonFileExporter(path, max_line_bytes=limit),
        **{"gen_ai.tool.name": "lookup", "gen_ai.tool.call.result": "y" * 1_000_000},
    )
    [line] = _lines(path)
    assert len(line.encode()) + 1 <= limit
    [span] = [s for b in read_batches(str(path), max_record_bytes=limit) for s in b.spans]
    assert span.attributes[TRUNCATED_KEY] == "gen_ai.tool.call.result"
    assert "more characters cut]" in span.attributes["gen_ai.tool.call.result"]
    assert span.attributes["gen_ai.tool.name"] == "lookup"
    code, out, err = cli("audit", str(path), "--max-record-bytes", str(limit), "--json")
    assert code != 2, err
    assert json.loads(out)["spans_read"] == 1 and json.loads(out)["issues"] == []
