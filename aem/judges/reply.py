"""Read a reply body within a byte cap and a deadline, chunk by chunk.

Why its own module: what bounds a hostile peer — an endless body, a body dripped one
byte at a time — is checked here, per chunk, before the chunk is kept, so neither memory
nor time grows past the bound however the server behaves.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import httpx


class ReplyTooLong(ValueError):
    """The body went past the cap; nothing more of it was read."""


def read_reply(chunks: Iterable[bytes], max_bytes: int, deadline: float) -> bytes:
    """The body from ``chunks``; :class:`ReplyTooLong` past ``max_bytes``,
    ``httpx.ReadTimeout`` past ``deadline`` (a ``time.monotonic()`` value)."""
    kept: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise ReplyTooLong(f"response over {max_bytes:,} bytes (max_response_bytes)")
        kept.append(chunk)
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the reply did not end by the deadline")
    return b"".join(kept)
