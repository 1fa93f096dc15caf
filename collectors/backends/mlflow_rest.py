"""MLflow's REST API over AEM's HTTP client: bounded retries and errors that name the page.

Why REST and not the ``mlflow`` client: the tracking client pulls in the whole MLflow
stack (pandas, SQLAlchemy, Flask …) whose pins fight AEM's; the few endpoints a span
source and an assessment sink need are plain JSON. Both the source
(:mod:`collectors.backends.mlflow`) and the sink (:mod:`aem.sinks.mlflow`) talk through
this one client, so a slow or failing server is retried and reported the same way, and
every answer is read within the same bounds (:mod:`collectors.backends.bounded`: bytes
per answer, seconds per whole request, JSON depth; the retries are :mod:`aem.foundation.http`'s).

URLs: ``mlflow://HOST:PORT/…`` is plain HTTP (a local or in-cluster server),
``mlflow+https://HOST/…`` is HTTPS. Credentials come from the environment, as MLflow's own
clients read them: ``MLFLOW_TRACKING_TOKEN`` (a bearer token) or
``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` (basic auth) — never the URL.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from aem.foundation.http import HttpError, Response
from collectors.backends.base import BackendError
from collectors.backends.bounded import (
    PullLimits,
    PullStopped,
    bound_reached,
    parse_json,
    pull_client,
)

TOKEN_ENV = "MLFLOW_TRACKING_TOKEN"
USERNAME_ENV = "MLFLOW_TRACKING_USERNAME"
PASSWORD_ENV = "MLFLOW_TRACKING_PASSWORD"


def base_url(parts: SplitResult, prefix: str = "") -> str:
    """``http(s)://host:port`` + ``prefix`` from an ``mlflow[+https]://`` URL."""
    if not parts.hostname:
        raise BackendError(f"mlflow URL {parts.geturl()!r} has no host: mlflow://HOST:PORT/…")
    scheme = "https" if parts.scheme.endswith("+https") else "http"
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{scheme}://{netloc}{prefix.rstrip('/')}"


def http_base_url(url: str) -> str:
    """An HTTP(S) base URL from either form a user may write in settings."""
    parts = urlsplit(url)
    if parts.scheme.startswith("mlflow"):
        return base_url(parts, parts.path)
    return url.rstrip("/")


def auth_headers(environ: Mapping[str, str], token: str | None = None) -> dict[str, str]:
    """The ``Authorization`` header MLflow's clients would send, if any."""
    token = token or environ.get(TOKEN_ENV)
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = environ.get(USERNAME_ENV), environ.get(PASSWORD_ENV)
    if user and password:
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {pair}"}
    return {}


class MlflowRest:
    """One MLflow server: JSON requests, each tried ``attempts`` times at most.

    Connection failures, stalls, 429, 500, 502, 503 and 504 are retried with a short
    doubling pause (:func:`~collectors.backends.bounded.pull_client`);
    any other refusal, or an answer that is not a JSON object, raises
    :class:`BackendError` at once, naming the server and the page. An answer larger than
    ``limits.max_page_bytes``, not whole within ``limits.request_seconds`` or nested too
    deep raises :class:`~collectors.backends.bounded.PullStopped` (not retried).
    """

    def __init__(
        self,
        base: str,
        headers: Mapping[str, str] | None = None,
        *,
        timeout: float = 30.0,
        attempts: int = 3,
        pause: float = 0.5,
        limits: PullLimits | None = None,
    ) -> None:
        self.base = base.rstrip("/")
        self.limits = limits or PullLimits()
        self.attempts = max(1, attempts)
        self._client = pull_client(
            self.base,
            self.limits,
            headers=headers,
            stall_seconds=timeout,
            attempts=self.attempts,
            pause=pause,
        )

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
        missing_ok: bool = False,
    ) -> dict[str, Any]:
        """The JSON object answered; ``{}`` for a 404 when ``missing_ok``."""
        page = f"{method} {self.base}{path}"
        try:
            answer = self._client.request(method, path, params=params, json=body)
        except HttpError as exc:
            stopped = bound_reached(exc)
            if stopped is not None:  # not retried: the same server would do it again
                raise PullStopped(f"mlflow {page}: {stopped}", stopped.kind) from exc
            raise BackendError(
                f"mlflow {page} {exc.detail} (after {exc.attempts} attempts)"
            ) from exc
        if answer.status == 404 and missing_ok:
            return {}
        if answer.status != 200:
            raise BackendError(f"mlflow {page} answered {answer.status}: {answer.text(300)}")
        return _json_object(answer, page)

    @property
    def received_bytes(self) -> int:
        """Bytes of answers read so far (the whole read's ``max_bytes`` counts them)."""
        return self._client.received_bytes

    def close(self) -> None:
        self._client.close()


def _json_object(answer: Response, page: str) -> dict[str, Any]:
    """The answer's JSON object (nesting too deep raises ``PullStopped`` from
    :func:`parse_json`: reported by the source, not fatal)."""
    try:
        body = parse_json(answer.body)
    except PullStopped as exc:
        raise PullStopped(f"mlflow {page}: {exc}", exc.kind) from exc
    except ValueError as exc:
        raise BackendError(
            f"mlflow {page} answered a malformed page (not JSON: {exc}): {answer.text()!r}"
        ) from exc
    if not isinstance(body, dict):
        raise BackendError(f"mlflow {page} answered a malformed page: {type(body).__name__}")
    return body
