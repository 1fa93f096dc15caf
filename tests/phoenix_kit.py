"""A real Phoenix server for tests, and the real OTel exporter that feeds it.

Phoenix lives in its own virtualenv (``make phoenix`` builds ``.venv-phoenix``: its pins
conflict with AEM's); it is started on loopback with its data in a temporary directory
and telemetry off, and stopped by its process group id. A test skips only when Phoenix is
not installed or does not start.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.conftest import ROOT, free_port, stop_process_group, wait_http

PHOENIX_VENV = Path(os.environ.get("AEM_PHOENIX_VENV", ROOT / ".venv-phoenix"))
PHOENIX_START_SECONDS = 300  # its first start runs migrations; CI machines are shared


@dataclass(frozen=True)
class Phoenix:
    base: str  # http://127.0.0.1:PORT
    port: int
    log: Path

    def url(self, project: str = "default", **query: Any) -> str:
        """The ``--from`` URL of a project."""
        tail = "&".join(f"{k}={v}" for k, v in query.items())
        return f"phoenix://127.0.0.1:{self.port}/{project}" + (f"?{tail}" if tail else "")

    def get(self, path: str, **params: Any) -> Any:
        response = httpx.get(f"{self.base}{path}", params=params, timeout=30)
        response.raise_for_status()
        return response.json()

    def spans(self, project: str = "default", **params: Any) -> list[dict[str, Any]]:
        """Every span of the project through Phoenix's REST API, following the cursor."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            query = {"limit": 1000, **params} | ({"cursor": cursor} if cursor else {})
            body = self.get(f"/v1/projects/{project}/spans", **query)
            found += body["data"]
            cursor = body.get("next_cursor")
            if not cursor:
                return found


@contextmanager
def running_phoenix(work: Path, settings: Mapping[str, str] | None = None) -> Iterator[Phoenix]:
    """A Phoenix server with its data under ``work``; skips the test when there is none.

    ``settings`` are more of Phoenix's environment variables: a bench sending tens of
    thousands of spans at once sizes the insert queue (``PHOENIX_MAX_SPANS_QUEUE_SIZE``,
    20,000 spans by default, past which Phoenix answers 503) to what it sends."""
    executable = PHOENIX_VENV / "bin" / "phoenix"
    if not executable.exists():
        pytest.skip(f"Phoenix is not installed at {PHOENIX_VENV} (`make phoenix` failed)")
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(work / "phoenix-data"),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        **(settings or {}),
    }
    env.pop("PYTHONPATH", None)  # Phoenix must not import AEM's worktree
    log = work / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(executable), "serve"], env=env, stdout=out, stderr=out, start_new_session=True
        )
    try:
        base = f"http://127.0.0.1:{port}"
        if not wait_http(f"{base}/healthz", proc, PHOENIX_START_SECONDS):
            tail = log.read_text(errors="replace")[-1500:]
            pytest.skip(f"Phoenix did not start:\n{tail}")
        yield Phoenix(base, port, log)
    finally:
        stop_process_group(proc)


def wait_for(fetch: Any, done: Any, seconds: float = 60) -> Any:
    """Poll ``fetch()`` until ``done(value)`` or the deadline; the last value."""
    deadline = time.monotonic() + seconds
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = fetch()
    return value
