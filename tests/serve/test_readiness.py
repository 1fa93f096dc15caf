"""``/readyz`` tells the truth about intake: while requests are answered ``queue_full``
(evaluation is behind and the ingest queue holds no room) it is 503 and says why; once
the queue has room again it is 200. It used to say "ready" while every request was 429."""

from __future__ import annotations

import httpx
import pytest

from bench.serve.workload import session_copies
from tests.serve.conftest import metric, wait_for

pytestmark = pytest.mark.slow

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def test_readyz_is_503_while_intake_answers_queue_full(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--workers", "0",
        "--ingest-queue-spans", "5",
        "--max-spans-in-flight", "3",
        "--session-idle-seconds", "3",
        "--drain-timeout-seconds", "5",
    )  # fmt: skip
    bodies = [body for _, requests in session_copies(6, prefix="rz") for body in requests]
    with httpx.Client(base_url=serve.http, timeout=10) as client:
        assert client.get("/readyz").status_code == 200
        statuses = []
        for body in bodies:
            statuses.append(client.post("/v1/traces", content=body, headers=PROTOBUF).status_code)
            if statuses[-1] == 429:
                break
        assert statuses[-1] == 429, statuses
        ready = client.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert "ingest queue full" in ready.text
        assert metric(serve.http, "aem_requests_rejected_total", transport="http",
                      reason="queue_full") >= 1  # fmt: skip
        # The open sessions complete (3 s idle), the assembler takes the queue: ready.
        wait_for(lambda: client.get("/readyz").status_code == 200, timeout=60,
                 what="/readyz 200 once the queue has room")  # fmt: skip
        assert client.post("/v1/traces", content=bodies[-1], headers=PROTOBUF).status_code == 200
    assert serve.stop() == 0
