"""A small session's verdict is not held behind a huge session's, through the real server.

With ``workers = 0`` a huge session was measured delaying an unrelated small session's
verdict by a minute and more. Its evaluation already had a thread of its own; what held
the small one was delivery: the huge session commits all its verdict items at once (a
session cut at 34,500 spans wrote 101,401 outbox rows) and the sinks delivered oldest
first, so every session committed after it waited until the last of those rows was out.

The huge session here is a few thousand spans and the sink takes its rows a few at a
time (``delivery_batch``: each round is a sink fsync and an outbox commit), so its
backlog lasts long enough to commit a small session behind it. What must hold: the small
session's verdict is in the sink within a few seconds of its last span (its idle timeout
included), before the huge session's last verdict line.
"""

from __future__ import annotations

import time

import httpx
import pytest

from bench.serve.huge_small import fresh_body, huge_template, small_session
from tests.serve.conftest import Serve, metric, post_until_accepted, wait_for

pytestmark = pytest.mark.slow

HUGE_REQUESTS = 12  # of about 500 spans: ~18,000 verdict rows
DELIVERY_BATCH = 1
# From the small session's last acknowledged span to its verdict in the sink: the idle
# timeout (1 s), its evaluation and a few delivery rounds, on a busy 2-core machine.
SMALL_VERDICT_SECONDS = 8.0


def _lines_of(serve: Serve) -> list[str]:
    """The session id of each verdict line, in the sink's order."""
    return [line["session_id"] for line in serve.verdicts()]


def test_a_small_verdict_is_not_delivered_after_a_huge_sessions_backlog(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--workers", "0",
        "--large-session-spans", "1000",
        "--delivery-batch", str(DELIVERY_BATCH),
    )  # fmt: skip
    url = f"{serve.http}/v1/traces"
    template, traces = huge_template(500)
    with httpx.Client(timeout=30) as client:
        # Warm up (the first evaluation loads the comparison model).
        post_until_accepted(client, url, small_session("warm"))
        wait_for(lambda: "warm" in _lines_of(serve), timeout=120, what="the warm-up verdict")
        post_until_accepted(
            client, url, [fresh_body(template, traces) for _ in range(HUGE_REQUESTS)]
        )
        wait_for(lambda: "huge" in _lines_of(serve), timeout=120, interval=0.2,
                 what="the huge session evaluated and its delivery begun")  # fmt: skip
        post_until_accepted(client, url, small_session("small"))
        sent = time.monotonic()
    wait_for(lambda: "small" in _lines_of(serve), timeout=120, interval=0.05,
             what="the small session's verdict")  # fmt: skip
    waited = time.monotonic() - sent
    wait_for(lambda: metric(serve.http, "aem_verdicts_pending") == 0, timeout=300,
             what="every verdict delivered")  # fmt: skip
    lines = _lines_of(serve)
    last_huge = len(lines) - 1 - lines[::-1].index("huge")
    # Committed behind the huge session's backlog, delivered before its end ...
    assert lines.index("small") < last_huge, (lines.index("small"), last_huge, waited)
    # ... and without waiting for it.
    assert waited < SMALL_VERDICT_SECONDS, waited
    assert serve.stop() == 0
