"""Every tunable of ``aem serve``: one pydantic model, one validation point, and the
``[serve]`` section it is in the one configuration model (:class:`ServeConfig`).

Why one model: the CLI, the ``[serve]`` table of the TOML config, ``--set serve.x=y``
overrides and ``python -m aem.serve --x-y`` flags all land here, so a default and
its check exist exactly once.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from aem.serve import defaults
from aem.settings import AemConfig
from aem.store import default_store_path

MiB = 1024 * 1024


def default_spool_path() -> Path:
    """``<user data dir>/aem/serve-spool.sqlite`` (platformdirs: ~/.local/share on Linux)."""
    import platformdirs

    return platformdirs.user_data_path("aem") / "serve-spool.sqlite"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback literals; anything else exposes the receiver."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class UnusableSetting(Exception):
    """A setting that validated but cannot be used here: a busy port, an unreadable TLS
    key, a spool that cannot be opened. ``aem serve`` exits 2 with the setting named."""

    def __init__(self, setting: str, reason: str) -> None:
        super().__init__(f"serve.{setting}: {reason}")
        self.setting = setting


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC and URLs spell it (an IPv6 literal in brackets)."""
    bare = host.strip("[]")
    return f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"


class ServeSettings(BaseModel):
    """Settings of the live evaluator (receivers, spool, pipeline, sinks, operations)."""

    model_config = ConfigDict(extra="forbid")

    # --- receivers ------------------------------------------------------------------
    host: str = Field("127.0.0.1", description="address both receivers bind")
    grpc_port: int = Field(4317, ge=-1, le=65535, description="OTLP/gRPC port; 0 = any, -1 = off")
    http_port: int = Field(4318, ge=-1, le=65535, description="OTLP/HTTP port; 0 = any, -1 = off")
    allow_non_loopback: bool = Field(
        False, description="required to bind anything but loopback: spans carry prompts"
    )
    ports_file: Path | None = Field(
        None, description="write the bound ports here as JSON once listening (for port 0)"
    )
    bearer_token: SecretStr | None = Field(
        None, description="when set, OTLP requests must carry 'Authorization: Bearer <token>'"
    )
    tls_cert_file: Path | None = Field(None, description="PEM certificate: serve TLS on both")
    tls_key_file: Path | None = Field(None, description="PEM private key for tls_cert_file")
    max_request_bytes: int = Field(
        20 * MiB, ge=1024, description="largest request body on the wire (413 / gRPC limit)"
    )
    max_decompressed_bytes: int = Field(
        64 * MiB, ge=1024, description="largest body after gzip; beyond it is a gzip bomb (413)"
    )
    receiver_workers: int = Field(
        8, ge=1, le=256, description="gRPC handler threads; also concurrent HTTP requests"
    )
    tls_handshake_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="a TLS handshake not done by then is dropped (an idle or stalled "
        "client cannot hold the port: handshakes run off the accept loop)",
    )
    max_tls_handshakes: int = Field(
        256,
        ge=1,
        description="TLS handshakes in flight on the HTTP receiver in all; beyond it new "
        "connections are closed at accept (a handshake holds a thread until its deadline)",
    )
    max_tls_handshakes_per_client: int = Field(
        4,
        ge=1,
        description="TLS handshakes in flight per client address; beyond it that "
        "address's new connections are closed at accept, so a few addresses cannot hold "
        "every handshake",
    )
    header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="the request line and headers must arrive within this (also "
        "the longest wait for the next request on a kept-alive HTTP connection)",
    )
    body_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="the whole body must arrive within this after the headers "
        "(a byte-by-byte sender is cut off with 408)",
    )
    max_connections: int = Field(
        512, ge=1, description="open HTTP connections in all; beyond it new ones are closed"
    )
    max_connections_per_client: int = Field(
        32,
        ge=1,
        description="open HTTP connections per client address; beyond it new "
        "ones are closed, so one address cannot take every connection",
    )
    max_request_decoded_bytes: int = Field(
        64 * MiB,
        ge=1024,
        description="largest request once decoded into spans (attributes "
        "expand after decompression); beyond it the request is refused (413 / INVALID_ARGUMENT)",
    )
    retry_after_seconds: float = Field(
        1.0, gt=0, description="retry hint sent with RESOURCE_EXHAUSTED / 429 / 503"
    )

    # --- spool ---------------------------------------------------------------------
    spool_path: Path = Field(
        default_factory=default_spool_path,
        description="SQLite spool + outbox file (default: the per-user data directory, "
        "not the current one, so two shells share one spool and no repo gets a stray file)",
    )
    spool_synchronous: Literal["FULL", "NORMAL"] = Field(
        defaults.SPOOL_SYNCHRONOUS,
        description="FULL: an acknowledged span survives power loss; NORMAL (WAL): it survives a "
        "crash of the process (kill -9) but not of the machine, and commits are cheaper",
    )
    spool_commit_batch: int = Field(
        defaults.SPOOL_COMMIT_BATCH,
        ge=1,
        description="most requests one spool transaction groups (group commit)",
    )
    retention_seconds: float = Field(
        86_400.0,
        gt=0,
        description="how long delivered verdicts and the marks of evaluated sessions and "
        "traces stay in the spool; within it a span of an evaluated session is recognised as "
        "late (also after a restart), after it the rows are pruned. Undelivered verdicts, and "
        "the marks of sessions that still have some, are never pruned",
    )
    retention_prune_interval_seconds: float = Field(
        60.0, gt=0, description="how often the pruner thread looks for rows past retention"
    )

    # --- sessions in flight ----------------------------------------------------------
    session_idle_seconds: float = Field(
        10.0, gt=0, description="a session whose root ended is complete after this long quiet"
    )
    session_max_lifetime_seconds: float | None = Field(
        3600.0, gt=0, description="a session open this long is cut and evaluated anyway"
    )
    tick_seconds: float = Field(0.2, gt=0, le=5, description="how often completion is checked")

    # --- bounded queues (backpressure) ------------------------------------------------
    ingest_queue_spans: int = Field(
        20_000, ge=1, description="spans received but not yet assembled; full → push back"
    )
    max_spans_in_flight: int = Field(
        500_000, ge=1, description="spans held in open sessions; above it intake pauses"
    )
    max_bytes_in_flight: int = Field(
        256 * MiB,
        ge=MiB,
        description="decoded bytes of spans accepted and not yet evaluated "
        "(ingest queue, open sessions, evaluation queue, spool); beyond it intake pushes back. "
        "Open sessions holding more than half of it are evicted, largest first, marked cut",
    )
    max_session_bytes: int = Field(
        32 * MiB,
        ge=1024,
        description="decoded bytes of one open session; beyond it the "
        "session is evicted (evaluated now, marked cut)",
    )
    max_open_sessions: int = Field(
        100_000,
        ge=1,
        description="open sessions in all; a request that would open more is "
        "pushed back and /readyz reports saturation",
    )
    max_open_sessions_per_client: int = Field(
        10_000,
        ge=1,
        description="open sessions per client address; a request that would "
        "open more is pushed back (only that client)",
    )
    eval_queue_sessions: int = Field(
        64, ge=1, description="complete sessions waiting for an evaluator; full → intake pauses"
    )
    large_session_spans: int = Field(
        defaults.LARGE_SESSION_SPANS,
        ge=1,
        description="a complete session with more spans is evaluated in a lane of its own, "
        "one at a time, so a huge session never holds the evaluators small sessions need",
    )
    workers: int | None = Field(
        None,
        ge=0,
        le=256,
        description="evaluation worker processes, so evaluating does not share the "
        "interpreter with the receivers (default: one per core; 0 = evaluate in the server "
        "process, in evaluator_workers threads). Verdicts are the same either way",
    )
    evaluator_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="evaluation threads when workers = 0; with worker processes, two threads "
        "per worker (or this many, if more) keep them fed",
    )
    spool_only: bool = Field(
        False,
        description="evaluation paused: accept and spool spans (durably, as always) but neither "
        "assemble nor evaluate them, and hold none in memory; a later start without it replays "
        "the spool and evaluates everything (maintenance windows, load tests of the receivers)",
    )
    drain_open_sessions: bool = Field(
        True,
        description="on SIGTERM evaluate sessions still open; false leaves them in the spool "
        "for the next start",
    )
    drain_timeout_seconds: float = Field(30.0, ge=0, description="shutdown budget for draining")

    # --- sinks -----------------------------------------------------------------------
    sinks: dict[str, Any] = Field(
        default_factory=dict,
        description="the sinks verdicts go to: filled from the [sinks.<name>] tables (one per "
        "sink, validated against that sink's own settings; built-ins: otlp, jsonl, phoenix, "
        "mlflow), which aem audit --sink reads too",
    )
    delivery_batch: int = Field(
        defaults.DELIVERY_BATCH, ge=1, description="outbox rows handed to a sink at once"
    )
    delivery_retry_initial_seconds: float = Field(defaults.DELIVERY_RETRY_INITIAL_SECONDS, gt=0)
    delivery_retry_max_seconds: float = Field(defaults.DELIVERY_RETRY_MAX_SECONDS, gt=0)
    delivery_poll_seconds: float = Field(defaults.DELIVERY_POLL_SECONDS, gt=0)

    # --- level-2 scorecards (docs/scorecards.md) ---------------------------------------
    scorecard: Path | None = Field(
        None, description="scorecard config: keep live totals of that pipeline's step spans"
    )
    store_path: Path = Field(
        default_factory=default_store_path,
        description="results store for scorecard totals (default: $AEM_STORE, else aem.sqlite)",
    )

    # --- operations --------------------------------------------------------------------
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO")

    @field_validator("sinks")
    @classmethod
    def _sinks(cls, value: dict[str, Any]) -> dict[str, Any]:
        from aem.sinks.registry import validate_sink_settings

        return dict(validate_sink_settings(value))

    @field_validator("bearer_token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("bearer_token is empty; leave it out to run without authentication")
        return value

    @field_validator("scorecard")
    @classmethod
    def _scorecard(cls, value: Path | None) -> Path | None:
        if value is not None:
            from aem.scorecards.scorecard import load_scorecard

            load_scorecard(value)  # refused here, with every reason, before serving
        return value

    @model_validator(mode="after")
    def _check(self) -> ServeSettings:
        if not self.allow_non_loopback and not is_loopback(self.host):
            raise ValueError(
                f"host {self.host!r} is not loopback; spans carry prompts and tool data, so "
                "binding it needs allow_non_loopback=true (and a bearer_token and TLS)"
            )
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("tls_cert_file and tls_key_file go together")
        if self.grpc_port == -1 and self.http_port == -1:
            raise ValueError("both receivers are off (grpc_port=-1, http_port=-1)")
        if self.max_connections_per_client > self.max_connections:
            raise ValueError("max_connections_per_client > max_connections")
        if self.max_tls_handshakes_per_client > self.max_tls_handshakes:
            raise ValueError("max_tls_handshakes_per_client > max_tls_handshakes")
        if self.max_open_sessions_per_client > self.max_open_sessions:
            raise ValueError("max_open_sessions_per_client > max_open_sessions")
        if max(self.max_request_decoded_bytes, self.max_session_bytes) > self.max_bytes_in_flight:
            raise ValueError(
                "max_request_decoded_bytes and max_session_bytes must be <= max_bytes_in_flight"
            )
        if self.max_decompressed_bytes < self.max_request_bytes:
            raise ValueError("max_decompressed_bytes must be >= max_request_bytes")
        if self.delivery_retry_max_seconds < self.delivery_retry_initial_seconds:
            raise ValueError("delivery_retry_max_seconds < delivery_retry_initial_seconds")
        if self.retention_prune_interval_seconds > self.retention_seconds:
            raise ValueError(
                "retention_prune_interval_seconds > retention_seconds: rows would outlive "
                "the retention by more than the retention itself"
            )
        return self

    def exposure_warnings(self) -> list[str]:
        """Why this configuration is risky, for the log at start (empty when it is not).

        Why a warning and not an error: a private network may be trusted on purpose, but
        an exposed receiver without a token or TLS takes spans (prompts, tool data) from,
        and shows them to, anyone who can reach it — the operator must hear it.
        """
        if is_loopback(self.host):
            return []
        out = []
        if self.bearer_token is None:
            out.append("no bearer_token: anyone who can reach the port can send spans")
        if self.tls_cert_file is None:
            out.append("no TLS: spans (prompts, tool data) cross the network in clear text")
        return out


class ServeConfig(AemConfig):
    """The one configuration model as ``aem serve`` reads it: everything ``aem audit``
    reads, plus the ``[serve]`` section.

    Why a section and not a file of its own: the file is read once and checked whole,
    and the sinks the server delivers through are the ``[sinks.<name>]`` tables every
    command shares (``serve.sinks`` is filled from them, never written twice).
    """

    serve: ServeSettings = Field(default_factory=lambda: ServeSettings.model_validate({}))

    @model_validator(mode="after")
    def _shared_sinks(self) -> ServeConfig:
        if self.sinks and not self.serve.sinks:
            self.serve.sinks = dict(self.sinks)
        return self


def load_serve_config(config_path: Path | None, overrides: list[str]) -> ServeConfig:
    """The TOML file, read once, with ``--set`` overrides (``serve.key=value`` and every
    other key alike), checked whole: ``aem serve``'s one configuration."""
    from aem.config import load_resolved

    return cast(ServeConfig, load_resolved(config_path, overrides, schema=ServeConfig).config)
