"""One ``aem serve`` per store: the second refuses to start, naming the first.

Why: two servers on one spool both evaluate what arrives and both deliver from one outbox
— every verdict twice, and each one's "late span" bookkeeping contradicting the other's.
An advisory lock (``flock``) on ``<spool>.lock`` is held for the server's life; the kernel
releases it when the process ends however it ends (``kill -9`` included), so a crashed
server never blocks the next start. The file holds the holder's pid, for the message.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from aem.serve.settings import UnusableSetting


class StoreLock:
    """Held from :meth:`acquire` to :meth:`release` (or the end of the process)."""

    def __init__(self, spool_path: Path) -> None:
        self.path = Path(f"{spool_path}.lock")
        self._file: IO[str] | None = None

    def acquire(self) -> StoreLock:
        """Hold the lock, or refuse naming the holder. A lock file that cannot be created
        (a read-only or missing directory) is left to the spool, which says precisely why
        it cannot be opened: no second server can open that spool either."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115  (held open)
        except OSError:
            return self
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            spool = str(self.path)[: -len(".lock")]
            raise UnusableSetting(
                "spool_path",
                f"{spool} is in use by another aem serve (pid {holder}); stop it, or give "
                "this one a spool of its own",
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle
        return self

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
