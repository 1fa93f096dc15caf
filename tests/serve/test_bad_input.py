"""Bad requests get the right status and a clear message; the server keeps serving."""

from __future__ import annotations

import gzip
import json

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.serve.expected import SAMPLES

pytestmark = pytest.mark.slow

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
GOOD_LINE = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()[0]


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    from tests.serve.conftest import Serve

    server = Serve(
        tmp_path_factory.mktemp("bad") / "serve",
        [
            "--bearer-token",
            TOKEN,
            "--max-request-bytes",
            "65536",
            "--max-decompressed-bytes",
            "1048576",
        ],
    )
    yield server
    server.stop()


def _post(serve, body: bytes, content_type: str = "application/json", **headers: str):
    return httpx.post(
        f"{serve.http}/v1/traces",
        content=body,
        headers={"Content-Type": content_type, **AUTH, **headers},
        timeout=10,
    )


def test_http_bad_requests(serve) -> None:
    cases = [
        (_post(serve, b"{not json"), 400, "not valid JSON"),
        (_post(serve, b'{"resourceSpans": 5}'), 400, "not an OTLP"),
        (_post(serve, GOOD_LINE.encode(), "text/plain"), 415, "Content-Type"),
        (_post(serve, b"x" * 70_000), 413, "exceeds the limit"),
        (
            _post(serve, gzip.compress(b"\0" * 5_000_000), **{"Content-Encoding": "gzip"}),
            413,
            "inflates beyond",
        ),
        (_post(serve, b"\x1f\x8bnot gzip", **{"Content-Encoding": "gzip"}), 400, "gzip"),
        (_post(serve, GOOD_LINE.encode(), **{"Content-Encoding": "br"}), 415, "gzip only"),
        (
            httpx.post(
                f"{serve.http}/v1/traces",
                content=GOOD_LINE.encode(),
                headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
            ),
            401,
            "bearer token",
        ),
        (
            httpx.post(
                f"{serve.http}/v1/traces",
                content=GOOD_LINE.encode(),
                headers={"Content-Type": "application/json"},
            ),
            401,
            "bearer token",
        ),
    ]
    for response, status, phrase in cases:
        assert response.status_code == status, (status, response.text)
        assert phrase in response.json()["message"], response.text
    # protobuf requests get a protobuf google.rpc.Status back
    from google.rpc import status_pb2

    bad = _post(serve, b"\xff\x00garbage", "application/x-protobuf")
    assert bad.status_code == 400
    assert "protobuf" in status_pb2.Status.FromString(bad.content).message
    # ... and the server still serves
    ok = _post(serve, GOOD_LINE.encode())
    assert ok.status_code == 200 and ok.json() == {}
    assert httpx.get(f"{serve.http}/healthz").status_code == 200
    assert httpx.get(f"{serve.http}/readyz").status_code == 200


def test_partial_success_counts_bad_spans(serve) -> None:
    doc = json.loads(GOOD_LINE)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    bad = dict(spans[0], spanId="abc", traceId="00" * 16)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = [bad, *spans]
    response = _post(serve, gzip.compress(json.dumps(doc).encode()), **{"Content-Encoding": "gzip"})
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "traceId" in partial["errorMessage"]
    metrics = httpx.get(f"{serve.http}/metrics").text
    assert 'aem_spans_rejected_total{reason="invalid"} 1.0' in metrics


def test_grpc_token_and_garbage(serve) -> None:
    request = trace_service_pb2.ExportTraceServiceRequest()
    with grpc.insecure_channel(serve.grpc) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as denied:
            stub.Export(request, timeout=10)
        assert denied.value.code() is grpc.StatusCode.UNAUTHENTICATED
        raw = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as garbage:
            raw(b"\xff\x00garbage", timeout=10, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert garbage.value.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT)
        ok = stub.Export(request, timeout=10, metadata=[("authorization", f"Bearer {TOKEN}")])
        assert not ok.HasField("partial_success")
