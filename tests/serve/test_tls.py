"""TLS and a bearer token on the gRPC receiver, with the real OTLP exporters in their own
processes: the right token over TLS is accepted and evaluated; a wrong token is
``UNAUTHENTICATED`` and nothing reaches the spool; a plaintext client gets no answer. The
certificate is self-signed, made here with the ``openssl`` command."""

from __future__ import annotations

import shutil
import sqlite3
import ssl
import subprocess

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.serve.conftest import metric, send, wait_for
from tests.serve.expected import CASES, SAMPLES

pytestmark = pytest.mark.slow

TOKEN = "tls-s3cret"
GRPC_FILE = SAMPLES / "weather_genai.otlp.jsonl"  # session "weather-genai"
HTTP_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"


def self_signed(directory) -> tuple[str, str]:
    """A throwaway certificate for 127.0.0.1 / localhost and its key (PEM files)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


def _lines(path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line)


def test_grpc_tls_with_bearer_token(serve_factory, tmp_path) -> None:
    cert, key = self_signed(tmp_path)
    serve = serve_factory(
        "serve",
        "--cases",
        str(CASES),
        "--bearer-token",
        TOKEN,
        "--tls-cert-file",
        cert,
        "--tls-key-file",
        key,
    )
    https = f"https://127.0.0.1:{serve.ports['http']}"
    trust = ssl.create_default_context(cafile=cert)

    def spooled() -> tuple[int, int]:
        with sqlite3.connect(serve.spool) as conn:
            spans = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
            done = conn.execute("SELECT coalesce(sum(spans), 0) FROM done_sessions").fetchone()[0]
        return spans, done

    # A wrong token over TLS: the TLS handshake works, the token does not.
    wrong = send("grpc", serve.grpc, [GRPC_FILE], "--ca-file", cert, "--token", "wrong")
    assert wrong["returncode"] == 1 and wrong["exported"] == 0
    assert wrong["failed"] == _lines(GRPC_FILE)
    assert "StatusCode.UNAUTHENTICATED" in wrong["stderr"], wrong["stderr"]
    rejected = metric(
        https, "aem_requests_rejected_total", trust, transport="grpc", reason="unauthenticated"
    )
    assert rejected == _lines(GRPC_FILE)  # one request per line, none retried
    assert metric(https, "aem_spans_received_total", trust, transport="grpc") == 0
    assert spooled() == (0, 0)

    # A plaintext client on the TLS port gets no answer at all, token or not.
    with grpc.insecure_channel(serve.grpc) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as plaintext:
            stub.Export(
                trace_service_pb2.ExportTraceServiceRequest(),
                timeout=5,
                metadata=[("authorization", f"Bearer {TOKEN}")],
            )
        assert plaintext.value.code() is grpc.StatusCode.UNAVAILABLE

    # The right token over TLS, on gRPC and (same certificate) on HTTP: accepted, evaluated.
    ok = send("grpc", serve.grpc, [GRPC_FILE], "--ca-file", cert, "--token", TOKEN)
    assert ok["failed"] == 0 and ok["exported"] == _lines(GRPC_FILE), ok["stderr"]
    ok = send("http", f"{https}/v1/traces", [HTTP_FILE], "--ca-file", cert, "--token", TOKEN)
    assert ok["failed"] == 0 and ok["exported"] == _lines(HTTP_FILE), ok["stderr"]

    def verdict_sessions() -> set[str]:
        return {line["session_id"] for line in serve.verdicts()}

    wait_for(
        lambda: verdict_sessions() == {"weather-genai", "weather-oi"},
        timeout=60,
        what="verdicts of both sessions",
    )
    assert metric(https, "aem_spans_received_total", trust, transport="grpc") == _lines(GRPC_FILE)
    assert metric(https, "aem_sessions_evaluated_total", trust) == 2
    assert spooled() == (0, _lines(GRPC_FILE) + _lines(HTTP_FILE))
    assert serve.stop() == 0
