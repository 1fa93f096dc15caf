"""Denial of service before authentication, through the real server: an idle TLS
connection, slow headers and bodies, connection hoarding, unauthenticated gRPC calls and
too many of them. Each test runs the attack on raw sockets and, at the same time, real
OTLP exporters of well-behaved clients whose spans must still be accepted and evaluated.

Attackers connect from 127.0.0.2 / 127.0.0.3 (still loopback): the server caps per client
address, and the well-behaved exporters are on 127.0.0.1."""

from __future__ import annotations

import gzip
import ssl
import threading
import time

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from bench.serve.attackers import IdleConnection, SlowBody, SlowHeaders, closed_by_peer, connect
from bench.serve.workload import session_copies
from tests.serve.conftest import metric, send, wait_for
from tests.serve.expected import SAMPLES
from tests.serve.test_tls import self_signed

pytestmark = pytest.mark.slow

TOKEN = "hardening-s3cret"
GRPC_FILE = SAMPLES / "weather_genai.otlp.jsonl"  # session "weather-genai"
HTTP_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _verdict_sessions(serve) -> set[str]:
    return {line["session_id"] for line in serve.verdicts()}


def test_tls_stall_and_slow_clients_do_not_block_authorised_exporters(
    serve_factory, tmp_path
) -> None:
    cert, key = self_signed(tmp_path)
    serve = serve_factory(
        "serve",
        "--bearer-token", TOKEN,
        "--tls-cert-file", cert,
        "--tls-key-file", key,
        "--receiver-workers", "2",
        "--tls-handshake-timeout-seconds", "1",
        "--header-timeout-seconds", "2",
        "--body-timeout-seconds", "2",
        "--max-connections-per-client", "12",
    )  # fmt: skip
    https = f"https://127.0.0.1:{serve.ports['http']}"
    trust = ssl.create_default_context(cafile=cert)
    port = serve.ports["http"]
    # One idle TCP connection on the TLS port (a handshake that never starts), four
    # clients dripping headers and four dripping a body without a token: more than the
    # two decode slots, all at once, all the time.
    idle = IdleConnection(port)
    attackers = [
        idle,
        *(SlowHeaders(port, pace=0.05, tls=True) for _ in range(4)),
        *(SlowBody(port, pace=0.05, tls=True) for _ in range(4)),
    ]
    for attacker in attackers:
        attacker.start()
    try:
        time.sleep(0.5)
        # Operations endpoints answer at once over TLS while the attack runs.
        started = time.monotonic()
        for path in ("/healthz", "/readyz", "/metrics"):
            assert httpx.get(https + path, verify=trust, timeout=3).status_code == 200
        assert time.monotonic() - started < 3
        # Authorised exporters (HTTPS and gRPC over TLS) get every span accepted.
        ok = send("http", f"{https}/v1/traces", [HTTP_FILE], "--ca-file", cert, "--token", TOKEN)
        assert ok["failed"] == 0, ok["stderr"]
        ok = send("grpc", serve.grpc, [GRPC_FILE], "--ca-file", cert, "--token", TOKEN)
        assert ok["failed"] == 0, ok["stderr"]
        wait_for(lambda: idle.cut_off >= 1, timeout=10, what="idle TLS connection dropped")
        # The header drippers outlive the 2 s header deadline even when the exporters
        # above finish at once (a quiet machine): wait for the server to cut one off.
        wait_for(
            lambda: metric(https, "aem_requests_rejected_total", trust, transport="http",
                           reason="headers_timeout") >= 1,
            timeout=15,
            what="a header dripper cut off at the deadline",
        )  # fmt: skip
    finally:
        for attacker in attackers:
            attacker.stop()
    # The unauthenticated body drippers were answered 401 before their body was read.
    assert all(a.cut_off >= 1 for a in attackers[5:]), [a.cut_off for a in attackers]
    assert metric(https, "aem_requests_rejected_total", trust, transport="http",
                  reason="unauthenticated") >= 4  # fmt: skip
    assert metric(https, "aem_requests_rejected_total", trust, transport="http",
                  reason="tls_handshake_timeout") >= 1  # fmt: skip
    assert metric(https, "aem_requests_rejected_total", trust, transport="http",
                  reason="headers_timeout") >= 1  # fmt: skip
    wait_for(
        lambda: _verdict_sessions(serve) == {"weather-genai", "weather-oi"},
        timeout=60,
        what="verdicts of the well-behaved sessions",
    )
    assert serve.stop() == 0


def test_slow_body_and_connection_hoarding_are_cut_off(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--header-timeout-seconds", "1",
        "--body-timeout-seconds", "1",
        "--max-connections-per-client", "4",
    )  # fmt: skip
    port = serve.ports["http"]
    # No token configured, so a slow body is "authorised": the body deadline ends it (408).
    sock = connect(port, "127.0.0.2")
    sock.sendall(
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 1000\r\n\r\nab"
    )
    started = time.monotonic()
    sock.settimeout(5)
    answer = b""
    while chunk := sock.recv(4096):
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert 0.8 < time.monotonic() - started < 3
    sock.close()
    # Hoarding: 4 connections from one address are kept, the 5th and 6th closed at once.
    hoard = [connect(port, "127.0.0.3") for _ in range(6)]
    time.sleep(0.3)
    assert [closed_by_peer(s, 0.3) for s in hoard[4:]] == [True, True]
    assert metric(serve.http, "aem_requests_rejected_total", transport="http",
                  reason="client_connection_cap") == 2  # fmt: skip
    # ... while another address is served normally, and the hoarded ones time out.
    ok = send("http", f"{serve.http}/v1/traces", [HTTP_FILE])
    assert ok["failed"] == 0, ok["stderr"]
    assert all(closed_by_peer(s, 3) for s in hoard[:4])
    for s in hoard:
        s.close()
    wait_for(lambda: _verdict_sessions(serve) == {"weather-oi"}, timeout=60, what="verdicts")
    assert serve.stop() == 0


def test_grpc_token_checked_before_the_message_and_concurrency_push_back(serve_factory) -> None:
    serve = serve_factory("serve", "--bearer-token", TOKEN, "--receiver-workers", "1")
    good = [("authorization", f"Bearer {TOKEN}")]
    with grpc.insecure_channel(serve.grpc) as channel:
        stream = channel.stream_unary(EXPORT)
        release = threading.Event()

        def never_sent():
            release.wait(30)
            return
            yield b""  # a generator that sends no message until released

        # Wrong token, message never sent: refused at once, from the metadata alone.
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as denied:
            stream(never_sent(), timeout=10, metadata=[("authorization", "Bearer nope")])
        assert denied.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert time.monotonic() - started < 3
        # Wrong token with garbage: UNAUTHENTICATED, not a parse error — never parsed.
        raw = channel.unary_unary(EXPORT)
        with pytest.raises(grpc.RpcError) as garbage:
            raw(b"\xff\x00garbage" * 1000, timeout=10)
        assert garbage.value.code() is grpc.StatusCode.UNAUTHENTICATED
        # Four authorised calls hold the gate (receiver_workers x 4) ...
        held = [stream.future(never_sent(), timeout=30, metadata=good) for _ in range(4)]
        time.sleep(0.5)
        # ... so the fifth is pushed back with a retry hint, not a bare RESOURCE_EXHAUSTED.
        with pytest.raises(grpc.RpcError) as busy:
            raw(trace_service_pb2.ExportTraceServiceRequest().SerializeToString(),
                timeout=10, metadata=good)  # fmt: skip
        assert busy.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(busy.value)
        info = error_details_pb2.RetryInfo()
        assert status is not None and status.details[0].Unpack(info)
        assert info.retry_delay.ToNanoseconds() > 0
        release.set()
        for call in held:
            with pytest.raises(grpc.RpcError):
                call.result()  # no message: INVALID_ARGUMENT, and the gate is free again
    ok = send("grpc", serve.grpc, [GRPC_FILE], "--token", TOKEN)
    assert ok["failed"] == 0, ok["stderr"]
    assert metric(serve.http, "aem_requests_rejected_total", transport="grpc",
                  reason="unauthenticated") == 2  # fmt: skip
    assert metric(serve.http, "aem_requests_rejected_total", transport="grpc",
                  reason="too_many_requests") == 1  # fmt: skip
    wait_for(lambda: _verdict_sessions(serve) == {"weather-genai"}, timeout=60, what="verdicts")
    assert serve.stop() == 0


def test_multi_member_gzip_is_decoded_whole(serve_factory) -> None:
    serve = serve_factory("serve")
    [(session, requests)] = list(session_copies(1, prefix="gz"))
    first, second, *rest = requests  # one span each
    body = gzip.compress(first) + gzip.compress(second)  # `gzip -c a b`
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}
    r = httpx.post(f"{serve.http}/v1/traces", content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert metric(serve.http, "aem_spans_received_total", transport="http") == 2
    # Trailing bytes that are not a gzip member are refused, not ignored.
    r = httpx.post(f"{serve.http}/v1/traces", content=gzip.compress(rest[0]) + b"junk",
                   headers=headers)  # fmt: skip
    assert r.status_code == 400 and "not gzip" in r.text
    for request in rest:
        r = httpx.post(f"{serve.http}/v1/traces", content=gzip.compress(request), headers=headers)
        assert r.status_code == 200
    total = len(requests)
    assert metric(serve.http, "aem_spans_received_total", transport="http") == total

    def evaluated() -> float:
        return metric(serve.http, "aem_sessions_evaluated_total")

    wait_for(evaluated, timeout=60, what="the session evaluated")
    assert {line["session_id"] for line in serve.verdicts()} == {session}
    assert serve.stop() == 0
