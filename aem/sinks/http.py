"""The sinks' bounded request: AEM's one HTTP client (:mod:`aem.foundation.http`), in the sinks'
terms.

Why bounds at all: an HTTP library's own timeouts bound one read (or one connect), so a
downstream that drips a byte just under the read timeout held a delivery — and with it
the server's shutdown — for as long as it liked; and read whole, a downstream answering
200 with an endless body took the server to 3 GB in ten seconds. The client gives every
request one deadline (connect to last byte) and reads the answer only up to
``max_response_bytes``; this module names those settings in its messages and turns a
failure into what the outbox understands: :class:`ResponseRefused` for an answer too slow
or too large, :class:`~aem.sinks.base.DeliveryError` for a downstream that cannot be
reached. Either way the batch is retried later (the outbox's backoff, or ``aem audit``'s
bounded retries, :mod:`aem.sinks.delivery`), so by default a request here is tried once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import urlsplit

from aem.foundation.http import HttpClient, HttpError, Response, RetryPolicy, shut_socket
from aem.sinks.base import DeliveryError

__all__ = ["BoundedHttp", "Response", "ResponseRefused", "shut_socket"]

# Enough for any acknowledgement a sink reads (OTLP partial success, Phoenix's ids of a
# batch); a downstream that says more is not read further.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
# The sink's caller retries the batch: a request inside a delivery is tried once.
ONCE = RetryPolicy(attempts=1)
# The longest pause between two tries of one request, for every sink alike, a server's
# ``Retry-After`` included: a delivery waits seconds on a busy downstream, not minutes.
MAX_PAUSE_SECONDS = 5.0


class ResponseRefused(DeliveryError):
    """The downstream's answer was too slow or too large to read; the batch is retried."""


def delivery_error(error: HttpError, what: str) -> DeliveryError:
    """A failed request as the sinks report it, naming the downstream and the request."""
    where = f"{what} {error.target}"
    if error.kind == "deadline":
        return ResponseRefused(
            f"{where}: no complete answer within {error.limit:g} s (timeout_seconds); "
            f"{error.received:,} bytes had arrived"
        )
    if error.kind == "too_large":
        return ResponseRefused(
            f"{where}: answered {error.status} with a body over {int(error.limit):,} bytes; "
            "not read further"
        )
    return DeliveryError(f"{what} {error}")


class BoundedHttp:
    """Requests to one base URL, each finished (or refused) within ``deadline_seconds``.

    Most sinks only POST; the MLflow sink also reads (GET) and updates (PATCH, DELETE)
    assessments, and every one of those is bounded the same way."""

    def __init__(
        self,
        base_url: str,
        *,
        deadline_seconds: float,
        headers: Mapping[str, str] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        what: str = "downstream",
        retry: RetryPolicy = ONCE,
    ) -> None:
        url = urlsplit(base_url.rstrip("/"))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{what}: {base_url!r} is not an http(s) URL")
        self.deadline_seconds = deadline_seconds
        self.max_response_bytes = max_response_bytes
        self._what = what
        self._client = HttpClient(
            base_url,
            deadline_seconds=deadline_seconds,
            max_body_bytes=max_response_bytes,
            retry=replace(
                retry, max_backoff_seconds=min(retry.max_backoff_seconds, MAX_PAUSE_SECONDS)
            ),
            headers={"User-Agent": "aem-sink", **(headers or {})},
            limit_names=("timeout_seconds", "max_response_bytes"),
        )

    def post(self, path: str, body: bytes, content_type: str) -> Response:
        """The downstream's status and body; :class:`DeliveryError` when it is unreachable,
        :class:`ResponseRefused` when its answer overstays the deadline or the size cap."""
        return self.request("POST", path, body, content_type)

    def request(
        self, method: str, path: str, body: bytes = b"", content_type: str | None = None
    ) -> Response:
        """:meth:`post` for any method (``content_type`` only when there is a body)."""
        headers = {"Content-Type": content_type} if content_type else None
        try:
            return self._client.request(method, path, content=body, headers=headers)
        except HttpError as exc:
            raise delivery_error(exc, self._what) from exc

    def close(self) -> None:
        """Refuse new requests and cut the ones in flight (shutdown must not wait on a
        downstream)."""
        self._client.close()
