"""JSONL sink: every verdict item as one JSON line, fsynced before it counts as delivered.

Why fsync: the outbox marks a row delivered once this returns; a line still in the page
cache when the machine dies would be a verdict lost after it was "delivered".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import orjson
from pydantic import Field

from aem.sinks.base import SinkSettings
from aem.sinks.records import ALL_ITEM_KINDS, OutboxItem


class JsonlSettings(SinkSettings):
    path: Path = Field(description="append every verdict as a JSON line")


class JsonlSink:
    name = "jsonl"
    Settings = JsonlSettings
    item_kinds = ALL_ITEM_KINDS  # a file keeps every verdict, the session's included

    @classmethod
    def from_settings(cls, settings: JsonlSettings, services: object = None) -> JsonlSink:
        return cls(settings.path)

    def __init__(self, path: Path, *, name: str = "jsonl") -> None:
        self.name = name
        self._path = Path(path)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self._path.open("ab")
        self._lock = threading.Lock()

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        now = time.time()
        lines = b"".join(
            orjson.dumps({"key": i.key, "kind": i.kind, "delivered_at": now, **i.payload}) + b"\n"
            for i in items
        )
        with self._lock:
            self._file.write(lines)
            self._file.flush()
            os.fsync(self._file.fileno())
        return [i.key for i in items]

    def close(self) -> None:
        with self._lock:
            self._file.close()
