"""AEM's results store: one SQLite file, a table (or a few) per concern, schema versions.

Why one file for several concerns (scorecard totals today, dataset-test runs next): users
keep one path in their configuration and back up one file; each concern owns its tables
and migrates them on its own, so adding a concern never touches another's schema. The
``store_schema`` table records which version of each concern's schema the file holds.

The path is configuration: ``--store PATH`` on the commands, ``store_path`` in ``[serve]``,
else ``$AEM_STORE``, else ``aem.sqlite`` in the working directory.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

STORE_ENV = "AEM_STORE"
DEFAULT_STORE = "aem.sqlite"

_META = """
CREATE TABLE IF NOT EXISTS store_schema (
    concern TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    migrated_at REAL NOT NULL
) WITHOUT ROWID;
"""


class StoreError(RuntimeError):
    """The file holds a newer schema than this AEM knows, or cannot be opened."""


def default_store_path() -> Path:
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


class Store:
    """A connection to the store file, safe to share between threads (one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.executescript(_META)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the store: {exc}") from exc
        self._lock = threading.RLock()

    def ensure(self, concern: str, migrations: Mapping[int, str]) -> int:
        """Bring ``concern``'s tables to the newest of ``migrations`` (version → SQL).

        Each migration runs once, in order, in one transaction with its version mark.
        """
        newest = max(migrations)
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT version FROM store_schema WHERE concern = ?", (concern,)
            ).fetchone()
            current = int(row[0]) if row else 0
            if current > newest:
                raise StoreError(
                    f"{self.path}: {concern} schema is version {current}, this AEM knows "
                    f"{newest}; upgrade AEM to read it"
                )
            for version in sorted(v for v in migrations if v > current):
                for statement in migrations[version].split(";"):
                    if statement.strip():
                        conn.execute(statement)
            if newest != current:
                conn.execute(
                    "INSERT OR REPLACE INTO store_schema VALUES (?, ?, ?)",
                    (concern, newest, time.time()),
                )
        return newest

    def schema_versions(self) -> dict[str, int]:
        with self._lock:
            rows = self._conn.execute("SELECT concern, version FROM store_schema").fetchall()
        return {concern: int(version) for concern, version in rows}

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An immediate (write-locking) transaction: committed on exit, rolled back on error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            return list(self._conn.execute(sql, args).fetchall())

    def close(self) -> None:
        with self._lock:
            self._conn.close()
