"""A real local HTTP server speaking the chat-completions API, with scripted replies.

Tests start it on 127.0.0.1 (an ephemeral port) and stop it; ``script`` maps each
request (its parsed body) to a reply: status, body, headers, delay. Every request body is
kept, so a test can check what reached the judge.

Hostile peers are replies too, so a test reproduces each way a judge server can hurt a
run: ``drip`` sends the body one byte at a time (every read succeeds, the reply never
ends in time), ``endless`` streams a body that never ends, ``hang`` accepts the request
and never answers. :func:`refusing_response_format` wraps a script so the server rejects
``response_format`` as servers without structured output do; :func:`dead_url` is an
address where nothing listens (connection refused).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENDLESS_CHUNK = b"a" * 65536


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the model's text, wrapped in a chat-completions body
    raw: str | None = None  # the whole body as given (malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float | None = None  # seconds between single bytes of the body
    endless: bool = False  # a body that never ends (a JSON string that never closes)
    hang: bool = False  # read the request, never answer


def completion(content: str) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140},
        }
    )


@dataclass
class JudgeServer:
    url: str
    requests: list[dict[str, Any]]


Script = Callable[[dict[str, Any], int], Reply]


def refusing_response_format(script: Script) -> Script:
    """``script`` behind a server that answers 400 to any request with ``response_format``
    (as llama.cpp-style servers without structured output do)."""

    def refusing(body: dict[str, Any], n: int) -> Reply:
        if "response_format" in body:
            return Reply(
                status=400, raw='{"error": {"message": "response_format is not supported"}}'
            )
        return script(body, n)

    return refusing


def dead_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: every connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@contextmanager
def judge_server(script: Script) -> Iterator[JudgeServer]:
    """Serve ``script(body, n)`` (n = 0-based request number) until the block ends."""
    seen: list[dict[str, Any]] = []
    lock = threading.Lock()
    stopping = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen.append(body)
                number = len(seen) - 1
            reply = script(body, number)
            if reply.hang:
                stopping.wait()
                return
            stopping.wait(reply.delay)
            with suppress(BrokenPipeError, ConnectionResetError):
                self._send(reply)

        def _send(self, reply: Reply) -> None:
            payload = reply.raw if reply.raw is not None else completion(reply.content or "")
            data = payload.encode()
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            if not reply.endless:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if reply.endless:
                self.wfile.write(b'{"choices": [{"message": {"content": "')
                while not stopping.is_set():
                    self.wfile.write(ENDLESS_CHUNK)
            elif reply.drip is not None:
                for byte in data:
                    if stopping.wait(reply.drip):
                        return
                    self.wfile.write(bytes([byte]))
            else:
                self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield JudgeServer(f"http://127.0.0.1:{server.server_address[1]}/v1", seen)
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def elapsed(action: Callable[[], Any]) -> tuple[Any, float]:
    """``action()``'s value and the seconds it took (monotonic clock)."""
    start = time.monotonic()
    value = action()
    return value, time.monotonic() - start


def scripted_judge_config(url: str) -> Any:
    """An ``AemConfig`` with one OpenAI-compatible judge, ``scripted``, at ``url``: no
    retries and a 5 s deadline, so a scripted error or delay shows at once."""
    from aem.config import load_config

    return load_config(
        overrides=[
            'judges.scripted.kind="openai"',
            f'judges.scripted.base_url="{url}"',
            'judges.scripted.model="judge-m"',
            "judges.scripted.retries=0",
            "judges.scripted.timeout_seconds=5",
        ]
    )
