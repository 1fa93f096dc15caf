"""The one HTTP client (aem.foundation.http) against a real server on loopback, scripted per case:
what is retried and what is not, how long it waits, and what a dripping, endless or absent
server costs."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aem.foundation.http import HttpClient, HttpError, RetryPolicy, retry_after_seconds

Step = Callable[["Handler"], None]
MIB = 1 << 20
QUICK = RetryPolicy(attempts=3, backoff_seconds=0.01, jitter=0.0)


class Handler(BaseHTTPRequestHandler):
    server: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            step = self.server.script[min(self.server.requests, len(self.server.script) - 1)]
            self.server.requests += 1
        with contextlib.suppress(OSError):  # the client hung up: what a bounded client does
            step(self)

    do_POST = do_GET

    def answer(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)


class ScriptedServer(ThreadingHTTPServer):
    """Answers request ``n`` with ``script[n]`` (the last step repeats)."""

    daemon_threads = True

    def __init__(self, script: list[Step]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.requests = 0
        self.sent = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def scripted(*script: Step) -> Iterator[ScriptedServer]:
    server = ScriptedServer(list(script))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def status(code: int, body: bytes = b"", **headers: str) -> Step:
    return lambda h: h.answer(code, body, **headers)


def drip(pace: float, *, headers_too: bool = False) -> Step:
    """A byte every ``pace`` seconds: of the body, or (``headers_too``) from the status
    line on, so not even the headers are ever whole."""

    def step(h: Handler) -> None:
        if headers_too:
            h.close_connection = True
            stream = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100_000
        else:
            h.send_response(200)
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.flush()
            stream = b" " * 100_000
        for byte in stream:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(pace)

    return step


def endless(h: Handler) -> None:
    """200 with a chunked body that never ends (no length to refuse it by)."""
    h.send_response(200)
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b"x" * 65536
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    until = time.monotonic() + 30
    while time.monotonic() < until:
        h.wfile.write(frame)
        with h.server.lock:
            h.server.sent += len(chunk)


def client(url: str, **options: object) -> HttpClient:
    settings: dict[str, object] = {"deadline_seconds": 5.0, "max_body_bytes": MIB, "retry": QUICK}
    return HttpClient(url, **{**settings, **options})  # type: ignore[arg-type]


def test_a_503_is_retried_and_the_200_after_it_returned() -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=3, backoff_seconds=0.25, jitter=0.0, sleep=waits.append)
    with (
        scripted(status(503, b"busy"), status(200, b'{"ok": true}')) as server,
        client(server.url, retry=policy) as http,
    ):
        answer = http.request("GET", "/page")
    assert (answer.status, bytes(answer.body), server.requests) == (200, b'{"ok": true}', 2)
    assert waits == [0.25]


def test_retry_after_is_honoured_in_seconds_and_as_a_date() -> None:
    policy = RetryPolicy(attempts=2, backoff_seconds=0.01, jitter=0.0)
    with scripted(status(503, Retry_After="1"), status(200, b"done")) as server:
        started = time.monotonic()
        with client(server.url, retry=policy) as http:
            answer = http.request("GET", "/")
        waited = time.monotonic() - started
    assert answer.status == 200 and 1.0 <= waited < 2.0  # not the 0.01 s backoff
    later = formatdate(1_000_030, usegmt=True)
    assert retry_after_seconds(later, now=1_000_000) == pytest.approx(30)
    assert retry_after_seconds("soon") is None
    # Capped: a server asking for an hour gets max_backoff_seconds.
    assert RetryPolicy(max_backoff_seconds=2.0).delay(1, retry_after=3600) == 2.0


HOSTILE_RETRY_AFTER = [
    "Mon, 01 Jan 99999999999999999999 00:00:00 GMT",  # overflows every date type
    "Fri, 31 Dec 9999 23:59:59 GMT",  # far ahead
    "Thu, 01 Jan 1970 00:00:00 GMT",  # in the past
    "1e999",  # infinite
    "nan",
    "-5",
    "9" * 400,
]


@pytest.mark.parametrize("value", HOSTILE_RETRY_AFTER)
def test_a_hostile_retry_after_is_ignored_never_raised(value: str) -> None:
    """On a 503 (read for the pause) and on a 500 (read only for the message): the
    request ends as the policy's own schedule says, with the answer's error."""
    waits: list[float] = []
    policy = RetryPolicy(attempts=3, backoff_seconds=0.01, jitter=0.0, sleep=waits.append)
    with (
        scripted(status(503, b"busy", Retry_After=value)) as server,
        client(server.url, retry=policy) as http,
        pytest.raises(HttpError) as raised,
    ):
        http.request("GET", "/v1/spans")
    assert (raised.value.status, raised.value.retry_after, server.requests) == (503, None, 3)
    assert waits == [0.01, 0.02]  # the policy's own backoff, not the header's
    with scripted(status(500, b"broken", Retry_After=value)) as server, client(server.url) as h:
        error = h.request("GET", "/").error()
    assert error.status == 500 and error.retry_after is None and "broken" in str(error)


def test_a_redirect_error_names_its_location() -> None:
    moved = "https://elsewhere.example/v1/spans?project=p%C3%A9"
    with scripted(status(302, b"", Location=moved)) as server, client(server.url) as http:
        error = http.request("GET", "/v1/spans").error()
    assert error.status == 302 and server.requests == 1  # not followed
    assert f"redirects to '{moved}' (Location)" in str(error)


def test_a_400_is_returned_not_retried() -> None:
    with scripted(status(400, b"bad request")) as server, client(server.url) as http:
        answer = http.request("POST", "/judge", json={"a": 1})
    assert answer.status == 400 and answer.text() == "bad request" and server.requests == 1
    assert str(answer.error()) == f"POST {server.url}/judge: answered 400: bad request"


def test_attempts_exhausted_raise_the_one_error_naming_target_and_answer() -> None:
    with (
        scripted(status(502, b"bad gateway")) as server,
        client(server.url) as http,
        pytest.raises(HttpError) as raised,
    ):
        http.request("GET", "/v1/spans")
    error = raised.value
    assert server.requests == 3 and (error.kind, error.status, error.attempts) == ("status", 502, 3)
    assert str(error) == f"GET {server.url}/v1/spans: answered 502: bad gateway (after 3 attempts)"


@pytest.mark.parametrize(
    ("retry_deadline", "headers_too"),
    [(False, False), (True, False), (False, True)],
    ids=["body", "body-retried", "headers"],
)
def test_a_drip_is_cut_at_the_whole_request_deadline(
    retry_deadline: bool, headers_too: bool
) -> None:
    """A byte every 0.1 s restarts any per-read timeout; the deadline covers the whole,
    headers included, and also on the second request of a client (no connection kept
    from the first, whose socket the deadline could not see)."""
    policy = RetryPolicy(
        attempts=2, backoff_seconds=0.01, jitter=0.0, retry_deadline=retry_deadline
    )
    with scripted(status(200, b"first"), drip(0.1, headers_too=headers_too)) as server:
        http = client(server.url, deadline_seconds=1.0, retry=policy, limit_names=("t_s", "b"))
        assert http.request("GET", "/first").text() == "first"
        started = time.monotonic()
        with http, pytest.raises(HttpError) as raised:
            http.request("GET", "/slow")
        took = time.monotonic() - started
    tries = 2 if retry_deadline else 1
    assert server.requests == 1 + tries and took < tries * 1.0 + 0.6, f"{took:.2f} s"
    error = raised.value
    assert error.kind == "deadline" and error.received < 12
    assert error.received >= 3 or headers_too  # the body's bytes; headers are not counted
    assert str(error).startswith(f"GET {server.url}/slow: no whole answer within 1 s (t_s); ")
    assert f"{error.received:,} bytes had arrived" in str(error)


def test_an_endless_body_is_cut_at_the_cap_in_bounded_memory() -> None:
    with scripted(endless) as server:
        tracemalloc.start()
        try:
            with client(server.url) as http, pytest.raises(HttpError) as raised:
                http.request("GET", "/endless")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    error = raised.value
    assert error.kind == "too_large" and server.requests == 1  # not retried
    assert "larger than 1,048,576 bytes (max_body_bytes;" in str(error)
    assert MIB < error.received <= MIB + 65536
    assert peak < 4 * MIB, f"peak {peak / MIB:.1f} MiB"
    assert server.sent < 64 * MIB  # the cap and the sockets' buffers, then the client left


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    def huge(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(1 << 30))
        h.end_headers()
        h.wfile.write(b"x" * 65536)

    with (
        scripted(huge) as server,
        client(server.url) as http,
        pytest.raises(HttpError, match="it declares 1,073,741,824"),
    ):
        http.request("GET", "/")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_connection_is_retried_then_the_error() -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=3, backoff_seconds=0.01, jitter=0.0, sleep=waits.append)
    url = f"http://127.0.0.1:{free_port()}"
    with client(url, retry=policy) as http, pytest.raises(HttpError) as raised:
        http.request("GET", "/x")
    error = raised.value
    assert error.kind == "unreachable" and error.attempts == 3 and waits == [0.01, 0.02]
    assert str(error).startswith(f"GET {url}/x: unreachable (ConnectError: ")
    assert "Connection refused" in str(error) and str(error).endswith("(after 3 attempts)")


def test_the_backoff_doubles_within_its_jitter_and_cap() -> None:
    policy = RetryPolicy(backoff_seconds=1.0, max_backoff_seconds=5.0, jitter=0.2)
    for retry, base in ((1, 1.0), (2, 2.0), (3, 4.0)):
        waits = {policy.delay(retry) for _ in range(50)}
        assert all(0.8 * base <= w <= 1.2 * base for w in waits) and len(waits) > 1
    assert policy.delay(4) == 5.0  # 8 s, jittered, capped at 5
    with pytest.raises(ValueError, match="attempts=0"):
        RetryPolicy(attempts=0)


def test_close_cuts_a_request_in_flight_and_refuses_new_ones() -> None:
    with scripted(drip(0.1)) as server:
        http = client(server.url, deadline_seconds=30.0)
        threading.Timer(0.5, http.close).start()
        started = time.monotonic()
        with pytest.raises(HttpError) as raised:
            http.request("GET", "/held")
        assert time.monotonic() - started < 2 and raised.value.kind == "closed"
        with pytest.raises(HttpError, match="the client is closed; nothing was sent"):
            http.request("GET", "/after")
    assert server.requests == 1


def test_close_ends_a_retry_after_pause() -> None:
    """A server asking to wait 20 s does not hold a shutdown: closing ends the pause."""
    policy = RetryPolicy(attempts=2, max_backoff_seconds=60.0)
    with scripted(status(503, b"later", Retry_After="20")) as server:
        http = client(server.url, retry=policy)
        threading.Timer(0.5, http.close).start()
        started = time.monotonic()
        with pytest.raises(HttpError) as raised:
            http.request("GET", "/busy")
        assert time.monotonic() - started < 2
    assert raised.value.kind == "closed" and server.requests == 1


def test_every_sink_pauses_at_most_the_same_cap_whatever_retry_after_asks() -> None:
    from aem.sinks.base import DeliveryError
    from aem.sinks.http import MAX_PAUSE_SECONDS, BoundedHttp

    waits: list[float] = []
    policy = RetryPolicy(attempts=3, max_backoff_seconds=60.0, sleep=waits.append)
    with scripted(status(503, b"busy", Retry_After="50")) as server:
        http = BoundedHttp(server.url, deadline_seconds=5.0, retry=policy, what="mlflow")
        with pytest.raises(DeliveryError, match="answered 503: busy"):
            http.request("GET", "/api")
        http.close()
    assert waits == [MAX_PAUSE_SECONDS] * 2
