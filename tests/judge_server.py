"""A real local HTTP server speaking the chat-completions API, with scripted replies.

Tests start it on 127.0.0.1 (an ephemeral port) and stop it; ``script`` maps each
request (its parsed body) to a reply: status, body, headers, delay. Every request body is
kept, so a test can check what reached the judge.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the model's text, wrapped in a chat-completions body
    raw: str | None = None  # the whole body as given (malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


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


@contextmanager
def judge_server(script: Callable[[dict[str, Any], int], Reply]) -> Iterator[JudgeServer]:
    """Serve ``script(body, n)`` (n = 0-based request number) until the block ends."""
    seen: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                seen.append(body)
                number = len(seen) - 1
            reply = script(body, number)
            time.sleep(reply.delay)
            payload = reply.raw if reply.raw is not None else completion(reply.content or "")
            data = payload.encode()
            try:
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield JudgeServer(f"http://127.0.0.1:{server.server_address[1]}/v1", seen)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])
