"""Pull speed: spans/s read and evaluated from real tracing backends vs from a file.

The bundled samples are scaled up (``--sessions``, default 10,000: renamed copies, each a
session of its own) and written to a file by AEM's OTLP-JSON file exporter. Then each
backend of ``--backends`` (Phoenix, MLflow) is started here in its own virtualenv
(loopback, data in a temporary directory, stopped by its process group id), sent the same
spans through the OTel SDK's OTLP/HTTP exporter and, once it holds them all, measured:
reading only (its pages, spans decoded) and the whole audit (read, assemble, evaluate),
each against the file's figure from the same run, after one warm-up audit (the first
loads the models). Every backend's report must equal the file's, byte for byte (else
the run exits 1, both reports kept).

Why in one run: the 2 cores are shared, so a rate only means something next to the file's
rate taken in the same minutes; the ratio is the figure to read. A backend whose
virtualenv is missing (``make phoenix`` / ``make mlflow``) or that does not start is
reported as skipped, with the reason, and the others are still measured.

    python -m bench.backends.run [--backends phoenix,mlflow] [--sessions 10000]
                                 [--page-size 1000] [--repeat 1]

Prints one JSON object (rates in spans per second, the best of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from aem_record import OtlpJsonFileExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from aem.audit import audit_paths
from aem.foundation.model import InputIssue, SpanRecord
from bench.backends.scaled import renamed
from collectors.backends import SourceWindow, open_source
from collectors.backends.mlflow import SEARCH_PAGE_TRACES, SEARCH_PATH, TRACES_PER_BATCH
from collectors.readers import find_trace_files, read_batches

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p) for p in (ROOT / "sample_traces").glob("*.otlp.jsonl"))
BACKENDS = ("phoenix", "mlflow")
EXPORT_BATCH = 500  # spans per OTLP request, as a BatchSpanProcessor sends them
EXPORT_ATTEMPTS = 6  # a request refused (503: queue full) is sent again, 1, 2, 4 … s later
INGEST_SECONDS = 1800  # how long a backend may take to store what it accepted


def _say(what: str) -> None:
    """Progress on standard error (the run takes many minutes; the JSON stays clean)."""
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def scaled_spans(sessions: int) -> list[SpanRecord]:
    """Copies of the top-level samples until ``sessions`` sessions (about), each copy
    earlier than the next by the samples' whole time range (the last copy at the samples'
    own times).

    Why apart in time: backends answer in start-time order (Phoenix by span, MLflow by
    trace), so copies at the same times would come back interleaved — thousands of
    sessions open at once where the file, copy after copy, holds a few, and the report's
    ``peak_open_sessions`` would differ. Apart, every path reads the copies in one order.
    """
    files, _ = find_trace_files(SAMPLES)
    base = [s for f in files for batch in read_batches(f) for s in batch.spans]
    per_copy = len({_session_of(s) for s in base})
    copies = max(1, round(sessions / per_copy))
    period = max(s.end_unix_nano for s in base) - min(s.start_unix_nano for s in base) + 10**9
    return [
        s
        for n in range(copies)
        for s in renamed(
            base, f"bench{n}", session_suffix=f"~{n}", shift_ns=(n - copies + 1) * period
        )
    ]


def _session_of(span: SpanRecord) -> str:
    from collectors.assembler import session_key_of

    key = session_key_of(span)
    return key[2] if key else span.trace_id


@dataclass(frozen=True)
class Target:
    """A started backend: where to send spans, where to pull them from, what it holds."""

    url: str  # the ``--from`` URL
    endpoint: str  # its OTLP/HTTP traces endpoint
    headers: dict[str, str]
    held: Callable[[], int]  # spans (or traces) stored so far, to compare with ``expected``
    expected: int
    paging: str


@contextmanager
def _phoenix(work: Path, spans: list[SpanRecord], page_size: int) -> Iterator[Target]:
    """Phoenix, its insert queue sized to every span sent (its default 20,000 gives 503s)."""
    from tests.phoenix_kit import running_phoenix

    settings = {"PHOENIX_MAX_SPANS_QUEUE_SIZE": str(len(spans) + EXPORT_BATCH)}
    with running_phoenix(work, settings) as phoenix:

        def held() -> int:
            query = "{ projects { edges { node { name recordCount } } } }"
            answer = httpx.post(f"{phoenix.base}/graphql", json={"query": query}, timeout=60)
            edges = answer.json()["data"]["projects"]["edges"]
            return sum(e["node"]["recordCount"] for e in edges if e["node"]["name"] == "default")

        yield Target(
            phoenix.url(page_size=page_size),
            f"{phoenix.base}/v1/traces",
            {},
            held,
            len(spans),
            f"{page_size} spans per page",
        )


@contextmanager
def _mlflow(work: Path, spans: list[SpanRecord], page_size: int) -> Iterator[Target]:
    """MLflow, one experiment; it stores each request before answering, so ``held``
    counts traces only to prove it."""
    from tests.mlflow.kit import running_mlflow

    with running_mlflow(work) as server:
        name, experiment_id = server.experiment("bench")

        def held() -> int:
            location = {"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {}}
            location["mlflow_experiment"] = {"experiment_id": experiment_id}
            body: dict[str, Any] = {"locations": [location], "max_results": 500}
            count = 0
            while True:
                page = httpx.post(f"{server.base}{SEARCH_PATH}", json=body, timeout=60).json()
                count += len(page.get("traces") or [])
                if not page.get("next_page_token"):
                    return count
                body["page_token"] = page["next_page_token"]

        yield Target(
            f"mlflow://{server.hostport}/{name}",
            f"{server.base}/v1/traces",
            {"x-mlflow-experiment-id": experiment_id},
            held,
            len({s.trace_id for s in spans}),
            f"{SEARCH_PAGE_TRACES} traces per search page, {TRACES_PER_BATCH} per batchGet",
        )


OPENERS: dict[str, Callable[[Path, list[SpanRecord], int], AbstractContextManager[Target]]] = {
    "phoenix": _phoenix,
    "mlflow": _mlflow,
}


def _record(spans: list[SpanRecord], path: Path) -> list[ReadableSpan]:
    """The spans as the SDK's, written to ``path`` by AEM's file exporter: the baseline."""
    from tests.serve.sender import to_readable

    sdk = [to_readable(s) for s in spans]
    recorder = OtlpJsonFileExporter(path)
    for start in range(0, len(sdk), EXPORT_BATCH):
        recorder.export(sdk[start : start + EXPORT_BATCH])
    recorder.shutdown()
    return sdk


def _ingest(target: Target, sdk: list[ReadableSpan]) -> dict[str, float]:
    """Send every span, a refused request again after a doubling pause; then wait until
    the backend holds them all. Seconds to accept and to store."""
    started = time.perf_counter()
    exporter = OTLPSpanExporter(endpoint=target.endpoint, headers=target.headers, timeout=60)
    for start in range(0, len(sdk), EXPORT_BATCH):
        for attempt in range(EXPORT_ATTEMPTS):
            if exporter.export(sdk[start : start + EXPORT_BATCH]) is SpanExportResult.SUCCESS:
                break
            time.sleep(2**attempt)
        else:
            raise RuntimeError(f"{target.endpoint} refused spans {start}… {EXPORT_ATTEMPTS}×")
    exporter.shutdown()
    accepted = time.perf_counter() - started
    deadline = time.monotonic() + INGEST_SECONDS
    while (held := target.held()) < target.expected and time.monotonic() < deadline:
        time.sleep(2)
    if held < target.expected:
        raise RuntimeError(f"{target.url} holds {held} of {target.expected} after the wait")
    return {"accept": accepted, "stored": time.perf_counter() - started}


def _best(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """The shortest of ``repeat`` runs (seconds) and what the run counted."""
    best, counted = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        counted = run()
        best = min(best, time.perf_counter() - started)
    return best, counted


@dataclass
class Measured:
    """One path's figures: read-only and whole-audit seconds, spans, the audit's report."""

    read_s: float
    audit_s: float
    spans: int
    report: str = ""

    def rates(self) -> dict[str, float]:
        return {
            "read_only_spans_per_s": round(self.spans / self.read_s),
            "audit_spans_per_s": round(self.spans / self.audit_s),
            "audit_seconds": round(self.audit_s, 1),
        }


def _measure_file(path: Path, repeat: int) -> Measured:
    def read() -> int:
        return sum(len(b.spans) for b in read_batches(str(path)))

    read_s, spans = _best(repeat, read)
    measured = Measured(read_s, 0.0, spans)

    def audit() -> int:
        report = audit_paths([str(path)])
        measured.report = report.model_dump_json()
        return report.spans_read

    measured.audit_s, _ = _best(repeat, audit)
    return measured


# The scaled samples are larger than one read takes by default: the bench lifts the
# whole read's bounds (collectors.backends.bounded), not the per-page ones.
UNBOUNDED_READ = "max_spans=100000000&max_bytes=100000000000&max_seconds=100000"


def _measure_source(url: str, repeat: int) -> Measured:
    source = open_source(url + ("&" if "?" in url else "?") + UNBOUNDED_READ, {})

    def pull() -> int:
        issues: list[InputIssue] = []
        return sum(len(b) for b in source.batches(SourceWindow(), issues))

    read_s, spans = _best(repeat, pull)
    measured = Measured(read_s, 0.0, spans)

    def audit() -> int:
        report = audit_paths([], sources=[source])
        measured.report = report.model_dump_json()
        return report.spans_read

    measured.audit_s, _ = _best(repeat, audit)
    return measured


def _backend(
    name: str, work: Path, spans: list[SpanRecord], sdk: list[ReadableSpan], args: Any
) -> tuple[dict[str, Any], Measured | None]:
    """One backend started, fed, measured and stopped; ``skipped`` when it cannot start."""
    import pytest

    try:
        with OPENERS[name](work, spans, args.page_size) as target:
            _say(f"{name}: started, sending {len(spans)} spans")
            ingest = _ingest(target, sdk)
            _say(f"{name}: holds them all after {ingest['stored']:.0f} s; measuring")
            measured = _measure_source(target.url, args.repeat)
    except pytest.skip.Exception as exc:  # not installed or not started: say so, go on
        return {"skipped": str(exc)}, None
    figures = {
        **measured.rates(),
        "paging": target.paging,
        "ingest_accept_seconds": round(ingest["accept"], 1),
        "ingest_stored_seconds": round(ingest["stored"], 1),
        "ingest_spans_per_s": round(len(spans) / ingest["stored"]),
    }
    return figures, measured


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--page-size", type=int, default=1000, help="Phoenix's spans per page")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    names = [n.strip() for n in args.backends.split(",") if n.strip()]
    if unknown := sorted(set(names) - set(BACKENDS)):
        parser.error(f"unknown backends {unknown}: choose from {', '.join(BACKENDS)}")
    spans = scaled_spans(args.sessions)
    result: dict[str, Any] = {
        "sessions": len({_session_of(s) for s in spans}),
        "spans": len(spans),
        "repeat": args.repeat,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scaled.otlp.jsonl"
        sdk = _record(spans, path)
        audit_paths([SAMPLES[0]])  # warm-up: the first audit loads models, whichever path
        _say(f"file: measuring {len(spans)} spans")
        baseline = _measure_file(path, args.repeat)
        result["file"] = baseline.rates()
        for name in names:
            figures, measured = _backend(name, Path(tmp) / name, spans, sdk, args)
            if measured is not None:
                figures |= _compared(name, measured, baseline)
            result[name] = figures
            _say(f"{name}: {figures}")
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    differ = [n for n in names if result[n].get("same_report") is False]
    return 1 if differ else 0


def _compared(name: str, backend: Measured, file: Measured) -> dict[str, Any]:
    """The backend's rates over the file's (same run), and whether the reports are equal.

    Why not stop at the first difference: a 10,000-session run takes many minutes, so the
    other backends are still measured, both reports are kept for a diff, and the run exits
    1."""
    same = backend.spans == file.spans and backend.report == file.report
    figures: dict[str, Any] = {
        "read_only_ratio": round(file.read_s / backend.read_s, 3),
        "audit_ratio": round(file.audit_s / backend.audit_s, 3),
        "same_report": same,
    }
    if not same:
        kept = Path(tempfile.mkdtemp(prefix=f"pull-{name}-"))
        (kept / "file.json").write_text(file.report)
        (kept / f"{name}.json").write_text(backend.report)
        figures["reports_kept_in"] = str(kept)
    return figures


if __name__ == "__main__":
    raise SystemExit(main())
