"""Operations: Prometheus counters and structured JSON logs.

Why a private ``CollectorRegistry``: tests start several servers in one interpreter and
the default global registry would refuse duplicate metric names.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and every ``extra`` field.

    Every line stays one valid JSON object whatever is logged: trace data in a message or
    an exception can hold lone surrogates, ``extra`` values non-string keys or integers
    beyond 64 bits, and a bad ``%`` format would otherwise end in logging's plain-text
    "--- Logging error ---" traceback in the middle of the JSON stream.
    """

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": _message(record),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        try:
            return orjson.dumps(out, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
        except (TypeError, ValueError):  # lone surrogates, huge ints, cycles, ...
            return orjson.dumps({key: _plain(value) for key, value in out.items()}).decode()


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception:  # a format that does not match its arguments
        return f"{record.msg!r} % {record.args!r}"


def _plain(value: Any) -> Any:
    """A value orjson always takes: numbers and flags as they are, anything else as text
    with lone surrogates written as ``\\udcff`` escapes."""
    if (
        value is None
        or isinstance(value, bool | float)
        or (isinstance(value, int) and -(2**63) <= value < 2**64)
    ):
        return value
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def _log_uncaught(args: threading.ExceptHookArgs) -> None:
    """An exception that ends a thread, logged as JSON (Python would print it as text)."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    thread = args.thread.name if args.thread else "?"
    logging.getLogger("aem").critical(
        "thread %s died",
        thread,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    threading.excepthook = _log_uncaught


class ServeMetrics:
    """Every counter ``/metrics`` shows; gauges read live values through callbacks."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.spans_received = Counter(
            "aem_spans_received", "spans accepted and spooled", ["transport"], registry=r
        )
        self.spans_rejected = Counter(
            "aem_spans_rejected", "spans refused, by reason", ["reason"], registry=r
        )
        self.requests_rejected = Counter(
            "aem_requests_rejected",
            "requests refused, by reason",
            ["transport", "reason"],
            registry=r,
        )
        self.sessions_evaluated = Counter(
            "aem_sessions_evaluated", "sessions evaluated", registry=r
        )
        self.sessions_cut = Counter(
            "aem_sessions_cut", "sessions evaluated at max lifetime", registry=r
        )
        self.sessions_revised = Counter(
            "aem_sessions_revised",
            "sessions evaluated again as a revision (their id came back with new traces "
            "after the verdict); also counted in aem_sessions_evaluated",
            registry=r,
        )
        self.sessions_failed = Counter(
            "aem_sessions_failed", "sessions whose evaluation raised", registry=r
        )
        self.late_spans = Counter(
            "aem_late_spans", "spans arriving after their session was evaluated", registry=r
        )
        self.verdicts_delivered = Counter(
            "aem_verdicts_delivered", "verdict items accepted downstream", ["sink"], registry=r
        )
        self.spool_pruned = Counter(
            "aem_spool_pruned",
            "spool rows deleted after retention_seconds, by table (outbox: delivered "
            "verdicts; done_sessions, done_traces: marks of evaluated sessions)",
            ["table"],
            registry=r,
        )
        for table in ("outbox", "done_sessions", "done_traces"):
            self.spool_pruned.labels(table)  # shown as 0 before the first prune
        self.evaluation_seconds = Histogram(
            "aem_evaluation_seconds", "time to evaluate one session", registry=r
        )
        self.delivery_delay = Histogram(
            "aem_verdict_delivery_seconds",
            "from a session's evaluation to its verdict accepted downstream",
            ["sink"],
            registry=r,
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
        )
        self.started = time.time()
        self._fault_metrics()

    def _fault_metrics(self) -> None:
        """Counters of the hardening: evictions, failing spool writes, restarted threads."""
        r = self.registry
        self.sessions_evicted = Counter(
            "aem_sessions_evicted",
            "open sessions evaluated early (marked cut) to keep within the byte budget",
            registry=r,
        )
        self.spool_write_errors = Counter(
            "aem_spool_write_errors",
            "spool writes of the pipeline that failed and were retried (disk full...)",
            ["op"],
            registry=r,
        )
        self.thread_restarts = Counter(
            "aem_thread_restarts",
            "worker threads found dead and restarted by the supervisor",
            ["thread"],
            registry=r,
        )

    def gauge(self, name: str, doc: str, read: Callable[[], float]) -> None:
        Gauge(name, doc, registry=self.registry).set_function(read)

    def on_delivered(self, sink: str, delays: list[float]) -> None:
        self.verdicts_delivered.labels(sink).inc(len(delays))
        for delay in delays:
            self.delivery_delay.labels(sink).observe(delay)

    def on_pruned(self, rows: dict[str, int]) -> None:
        for table, n in rows.items():
            if n:
                self.spool_pruned.labels(table).inc(n)

    def render(self) -> bytes:
        return generate_latest(self.registry)
