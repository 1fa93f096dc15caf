"""Edges of the HTTP receiver, through the real server: a ``Content-Length`` with a
non-ASCII digit is a 400 (it used to raise in the handler: a traceback and no answer),
and serving on the IPv6 loopback works on both receivers."""

from __future__ import annotations

import socket

import pytest

from tests.serve.conftest import send
from tests.serve.expected import SAMPLES

pytestmark = pytest.mark.slow

HTTP_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"


def _raw_request(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("length", [b"\xb2", b"1\xb9", b"\xd9\xa3"])  # '²', '1¹', '٣'
def test_non_ascii_content_length_is_400_and_the_server_carries_on(serve_factory, length) -> None:
    serve = serve_factory("serve", "--workers", "0")
    answer = _raw_request(
        serve.ports["http"],
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + length + b"\r\n\r\n{}",
    )
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"Content-Length" in answer and b"is not a decimal number" in answer
    assert "Traceback" not in serve.log()
    # Nothing else was lost: a well-behaved exporter is accepted.
    assert send("http", f"{serve.http}/v1/traces", [HTTP_FILE])["failed"] == 0
    assert serve.stop() == 0


def _ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def test_serving_on_the_ipv6_loopback(serve_factory) -> None:
    if not _ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (::1)")
    serve = serve_factory("serve", "--host", "::1", "--workers", "0")
    http = f"http://[::1]:{serve.ports['http']}"
    ok = send("http", f"{http}/v1/traces", [HTTP_FILE])
    assert ok["failed"] == 0, ok["stderr"]
    ok = send("grpc", f"[::1]:{serve.ports['grpc']}", [SAMPLES / "weather_genai.otlp.jsonl"])
    assert ok["failed"] == 0, ok["stderr"]
    import httpx

    assert httpx.get(f"{http}/healthz", timeout=5).status_code == 200
    assert serve.stop() == 0
