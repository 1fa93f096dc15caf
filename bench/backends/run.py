"""Pull speed: spans/s read and evaluated from a real Phoenix vs from a file of the same spans.

The bundled samples are scaled up (``--sessions``, default 1,000: renamed copies, each a
session of its own), sent to a Phoenix started here (its own virtualenv, loopback, data in
a temporary directory, stopped by its process id) through the SDK's OTLP/HTTP exporter,
and written to a file by AEM's OTLP-JSON file exporter. Then, in the same run and in
turn: reading only (Phoenix's pages vs the file's records, spans decoded), and the whole
audit (read, assemble, evaluate) from each, after one warm-up audit (the first loads the
models). Both audits must give the same report.

    python -m bench.backends.run [--sessions 1000] [--page-size 1000] [--repeat 2]

Prints one JSON object (rates in spans per second, the best of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from aem.audit import audit_paths
from aem.export.otlp_json import OtlpJsonFileExporter
from aem.model import InputIssue, SpanRecord
from bench.backends.scaled import renamed
from collectors.backends import SourceWindow, open_source
from collectors.readers import find_trace_files, read_batches

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p) for p in (ROOT / "sample_traces").glob("*.otlp.jsonl"))


def scaled_spans(sessions: int) -> list[SpanRecord]:
    """Copies of the top-level samples until ``sessions`` sessions (about)."""
    files, _ = find_trace_files(SAMPLES)
    base = [s for f in files for batch in read_batches(f) for s in batch.spans]
    per_copy = len({_session_of(s) for s in base})
    copies = max(1, round(sessions / per_copy))
    return [s for n in range(copies) for s in renamed(base, f"bench{n}", session_suffix=f"~{n}")]


def _session_of(span: SpanRecord) -> str:
    from collectors.assembler import session_key_of

    key = session_key_of(span)
    return key[2] if key else span.trace_id


def _send(base_url: str, spans: list[SpanRecord], path: Path) -> None:
    from tests.serve.sender import to_readable

    sdk = [to_readable(s) for s in spans]
    exporter = OTLPSpanExporter(endpoint=f"{base_url}/v1/traces", timeout=60)
    for start in range(0, len(sdk), 500):
        assert exporter.export(sdk[start : start + 500]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    recorder = OtlpJsonFileExporter(path)
    for start in range(0, len(sdk), 500):
        recorder.export(sdk[start : start + 500])
    recorder.shutdown()


def _best(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """The shortest of ``repeat`` runs (seconds) and what the run counted."""
    best, counted = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        counted = run()
        best = min(best, time.perf_counter() - started)
    return best, counted


def _measure(url: str, path: Path, repeat: int) -> dict[str, Any]:
    source = open_source(url, {})

    def pull() -> int:
        issues: list[InputIssue] = []
        return sum(len(b) for b in source.batches(SourceWindow(), issues))

    def read() -> int:
        return sum(len(b.spans) for b in read_batches(str(path)))

    reports: dict[str, str] = {}

    def audit_from(kind: str) -> Callable[[], int]:
        def run() -> int:
            options: dict[str, Any] = {"sources": [source]} if kind == "phoenix" else {}
            report = audit_paths([] if kind == "phoenix" else [str(path)], **options)
            reports[kind] = report.model_dump_json()
            return report.spans_read

        return run

    audit_paths([SAMPLES[0]])  # warm-up: the first audit loads models, whichever path it is
    pulled, spans = _best(repeat, pull)
    read_s, _ = _best(repeat, read)
    audit_file_s, audited = _best(repeat, audit_from("file"))
    audit_phoenix_s, _ = _best(repeat, audit_from("phoenix"))
    assert reports["file"] == reports["phoenix"], "the two audits' reports differ"
    return {
        "spans": spans,
        "read_only_spans_per_s": {"phoenix": round(spans / pulled), "file": round(spans / read_s)},
        "audit_spans_per_s": {
            "phoenix": round(audited / audit_phoenix_s),
            "file": round(audited / audit_file_s),
        },
        "audit_seconds": {"phoenix": round(audit_phoenix_s, 2), "file": round(audit_file_s, 2)},
        "same_report": True,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    import pytest

    from tests.phoenix_kit import running_phoenix

    spans = scaled_spans(args.sessions)
    try:
        result = _run(spans, args.page_size, args.repeat, running_phoenix)
    except pytest.skip.Exception as exc:  # no Phoenix (`make phoenix`): say so, measure nothing
        print(json.dumps({"skipped": str(exc)}))
        return 0
    result.update(sessions=len({_session_of(s) for s in spans}), page_size=args.page_size)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _run(
    spans: list[SpanRecord], page_size: int, repeat: int, running_phoenix: Any
) -> dict[str, Any]:
    """Phoenix up, the spans sent and recorded, both paths measured, Phoenix stopped."""
    with tempfile.TemporaryDirectory() as tmp, running_phoenix(Path(tmp) / "phoenix") as phoenix:
        path = Path(tmp) / "scaled.otlp.jsonl"
        started = time.perf_counter()
        _send(phoenix.base, spans, path)
        deadline = time.monotonic() + 300
        while len(phoenix.spans()) < len(spans) and time.monotonic() < deadline:
            time.sleep(1)
        ingest_s = time.perf_counter() - started
        result = _measure(phoenix.url(page_size=page_size), path, repeat)
    result["phoenix_ingest_seconds"] = round(ingest_s, 1)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
