"""The MLflow span source against a real MLflow server: the same spans give the same report.

Sample traces of three dialects (OTel GenAI, OpenInference, a multi-agent run with a root
cause) are exported to MLflow by the OTel SDK's own exporter, pulled back through
``mlflow://HOST:PORT/EXPERIMENT`` and audited; the JSON report must equal, byte for byte,
the report of the same files read from disk. Paging, the time window and the errors for
a server that is down, failing or answering garbage are checked through the same public
interface (:func:`open_source` and the source's ``batches``).
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

import pytest
from aem_record import otlp_json

import aem
from aem.foundation.model import InputIssue, SpanRecord
from bench.backends.scaled import renamed
from collectors.backends import BackendError, SourceWindow, open_source
from collectors.backends.mlflow import MlflowSource
from collectors.backends.mlflow_rest import MlflowRest
from collectors.readers import read_batches
from tests.mlflow.auditing import audit_source
from tests.mlflow.kit import MlflowServer
from tests.mlflow.sending import send_to_mlflow
from tests.scorecards_kit import cli
from tests.serve.conftest import SAMPLES, free_port
from tests.serve.sender import to_readable

pytestmark = pytest.mark.slow

FILES = [
    SAMPLES / f"{n}.otlp.jsonl" for n in ("weather_genai", "weather_openinference", "multi_agent")
]
WINDOW_FILE = SAMPLES / "helpdesk_rag.otlp.jsonl"


@pytest.fixture(scope="module")
def pulled(mlflow_server: MlflowServer) -> str:
    """The experiment URL holding the three samples."""
    name, experiment_id = mlflow_server.experiment("source")
    assert send_to_mlflow(mlflow_server.base, experiment_id, FILES) == 27
    return f"mlflow://{mlflow_server.hostport}/{name}"


def test_report_from_mlflow_equals_report_from_files(pulled: str) -> None:
    from_files = aem.audit_paths([str(f) for f in FILES]).model_dump_json(indent=2)
    from_mlflow = audit_source(pulled).model_dump_json(indent=2)
    assert from_mlflow == from_files
    assert '"root_cause"' in from_mlflow  # the multi-agent run's verdicts, not just passes


def _all_spans(source: object, window: SourceWindow | None = None) -> list[list[SpanRecord]]:
    issues: list[InputIssue] = []
    pages = list(source.batches(window or SourceWindow(), issues))  # type: ignore[attr-defined]
    assert issues == []
    return pages


def test_small_pages_give_the_same_spans_one_trace_at_a_time(pulled: str) -> None:
    whole = _all_spans(open_source(pulled, os.environ))
    parts = urlsplit(pulled)
    paged = MlflowSource(
        MlflowRest(f"http://{parts.netloc}"),
        parts.path.strip("/"),
        pulled,
        search_page=1,
        traces_per_batch=1,
    )
    pages = _all_spans(paged)
    assert len(pages) == 3  # one trace per search page, one trace per batch
    assert all(len({s.trace_id for s in page}) == 1 for page in pages)
    flat = [s for page in whole for s in page]
    assert [s for page in pages for s in page] == flat


def test_window_selects_traces_by_their_first_span_start(mlflow_server: MlflowServer) -> None:
    name, experiment_id = mlflow_server.experiment("window")
    send_to_mlflow(mlflow_server.base, experiment_id, [WINDOW_FILE])
    source = open_source(f"mlflow://{mlflow_server.hostport}/{name}", os.environ)
    spans = [s for page in _all_spans(source) for s in page]
    starts = sorted(
        {
            min(x.start_unix_nano for x in spans if x.trace_id == t)
            for t in {s.trace_id for s in spans}
        }
    )
    assert len(starts) >= 2, "the window sample needs two traces"
    cut = starts[1]
    later = [s for p in _all_spans(source, SourceWindow(since_unix_nano=cut)) for s in p]
    earlier = [s for p in _all_spans(source, SourceWindow(until_unix_nano=cut)) for s in p]
    assert {s.trace_id for s in later} | {s.trace_id for s in earlier} == {
        s.trace_id for s in spans
    }
    assert not {s.trace_id for s in later} & {s.trace_id for s in earlier}
    assert len(later) + len(earlier) == len(spans)
    # One nanosecond after a trace's start excludes it: the window is exact, not per millisecond.
    after = [s for p in _all_spans(source, SourceWindow(since_unix_nano=cut + 1)) for s in p]
    assert len({s.trace_id for s in after}) == len({s.trace_id for s in later}) - 1


def test_unknown_experiment_is_a_clear_error(mlflow_server: MlflowServer) -> None:
    source = open_source(f"mlflow://{mlflow_server.hostport}/no-such-experiment", os.environ)
    with pytest.raises(BackendError, match="no experiment 'no-such-experiment'"):
        list(source.batches(SourceWindow(), []))


def test_server_down_is_a_bounded_clear_error() -> None:
    source = open_source(f"mlflow://127.0.0.1:{free_port()}/anything", os.environ)
    started = time.monotonic()
    with pytest.raises(
        BackendError,
        match=r"mlflow GET http://127\.0\.0\.1:\d+/api/2\.0/mlflow/experiments/get-by-name "
        r"unreachable .*after 3 attempts",
    ):
        list(source.batches(SourceWindow(), []))
    assert time.monotonic() - started < 10


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """Finds the experiment, then answers the trace search as the test asks."""

    search_answer: tuple[int, bytes] = (500, b"boom")
    searches = 0
    delay = 0.0
    authorization: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).authorization.append(self.headers.get("Authorization"))
        self._answer(200, b'{"experiment": {"experiment_id": "7"}}')

    def do_POST(self) -> None:
        type(self).searches += 1
        time.sleep(self.delay)
        self._answer(*self.search_answer)

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def misbehaving() -> Iterator[type[_Misbehaving]]:
    handler = type("Handler", (_Misbehaving,), {"searches": 0, "authorization": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.port = server.server_address[1]  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("answer", "expected", "searches"),
    [
        ((500, b"boom"), r"traces/search answered 500: boom \(after 3 attempts\)", 3),
        ((200, b"<html>oops"), r"traces/search answered a malformed page \(not JSON", 1),
        ((200, b'{"traces": "nope"}'), r"traces/search: malformed page", 1),
        ((403, b'{"error_code": "PERMISSION_DENIED"}'), r"traces/search answered 403", 1),
    ],
)
def test_failing_or_garbled_pages_are_clear_errors(
    misbehaving: type[_Misbehaving], answer: tuple[int, bytes], expected: str, searches: int
) -> None:
    misbehaving.search_answer = answer
    url = f"mlflow://127.0.0.1:{misbehaving.port}/exp"  # type: ignore[attr-defined]
    with pytest.raises(BackendError, match=expected):
        list(open_source(url, os.environ).batches(SourceWindow(), []))
    assert misbehaving.searches == searches  # 5xx retried a bounded number of times, others not


def test_the_token_comes_from_the_environment_and_never_shows(
    misbehaving: type[_Misbehaving],
) -> None:
    port = misbehaving.port  # type: ignore[attr-defined]
    source = open_source(
        f"mlflow://someone:hunter2@127.0.0.1:{port}/exp", {"MLFLOW_TRACKING_TOKEN": "s3cret"}
    )
    assert source.name == f"mlflow://127.0.0.1:{port}/exp"
    with pytest.raises(BackendError) as raised:
        list(source.batches(SourceWindow(), []))
    assert misbehaving.authorization == ["Bearer s3cret"]
    assert "s3cret" not in str(raised.value) and "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("url", "base", "experiment"),
    [
        ("mlflow://127.0.0.1:5000/my-agent", "http://127.0.0.1:5000", "my-agent"),
        ("mlflow+https://mlflow.example.com/my-agent", "https://mlflow.example.com", "my-agent"),
        ("mlflow+https://host:8443/prefix/a%2Fb", "https://host:8443/prefix", "a/b"),
    ],
)
def test_urls_name_the_server_and_the_experiment(url: str, base: str, experiment: str) -> None:
    source = open_source(url, {})
    assert isinstance(source, MlflowSource)
    assert (source.rest.base, source.experiment) == (base, experiment)
    source.rest.close()


def test_a_slow_server_times_out_a_bounded_number_of_times(
    misbehaving: type[_Misbehaving],
) -> None:
    misbehaving.delay = 2.0
    port = misbehaving.port  # type: ignore[attr-defined]
    rest = MlflowRest(f"http://127.0.0.1:{port}", timeout=0.5, attempts=2, pause=0.1)
    source = MlflowSource(rest, "exp", f"mlflow://127.0.0.1:{port}/exp")
    started = time.monotonic()
    with pytest.raises(BackendError, match=r"traces/search unreachable \(ReadTimeout.*after 2"):
        list(source.batches(SourceWindow(), []))
    assert misbehaving.searches == 2
    assert time.monotonic() - started < 5


def test_since_last_reads_late_and_future_traces_once(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """MLflow keeps no time of arrival: ``--since last`` reads by start time from a day
    before the previous run and sets aside the spans it has seen. A trace that reaches
    MLflow after a run but started before what that run read, and one dated 2099, are
    each evaluated once, and the 2099 one does not stop later runs."""
    name, experiment_id = mlflow_server.experiment("late")
    weather = [s for b in read_batches(str(FILES[0])) for s in b.spans]
    to_now = time.time_ns() - min(s.start_unix_nano for s in weather)
    url, store = f"mlflow://{mlflow_server.hostport}/{name}", str(tmp_path / "aem.sqlite")

    def arrive(seed: str, shift_ns: int) -> None:
        spans = renamed(weather, f"late-{seed}", conversation=f"late-{seed}", shift_ns=shift_ns)
        path = tmp_path / f"{seed}.otlp.jsonl"
        path.write_text(json.dumps(otlp_json([to_readable(s) for s in spans])) + "\n")
        assert send_to_mlflow(mlflow_server.base, experiment_id, [path]) == len(spans)

    def run() -> tuple[list[str], list[dict[str, object]]]:
        code, out, err = cli("audit", "--from", url, "--since", "last", "--store", store, "--json")
        assert code in (0, 1), err
        report = json.loads(out)
        return sorted(s["session_id"] for s in report["sessions"]), report["issues"]

    hour = 3_600 * 10**9
    arrive("on-time", to_now - hour)
    assert run()[0] == ["late-on-time"]
    arrive("early", to_now - 3 * hour)  # started two hours before what the last run read
    arrive("future", 4_070_908_800 * 10**9 - min(s.start_unix_nano for s in weather))
    found, issues = run()
    assert found == ["late-early", "late-future"]
    assert sum(i["kind"] == "future_start" for i in issues) == len(weather)
    arrive("next", to_now - 2 * hour)
    assert run()[0] == ["late-next"]
    assert run()[0] == []
