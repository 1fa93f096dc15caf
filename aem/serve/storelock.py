"""One ``aem serve`` per store: the second refuses to start, naming the first.

Why: two servers on one spool both evaluate what arrives and both deliver from one outbox
— every verdict twice, and each one's "late span" bookkeeping contradicting the other's.
An advisory lock (``flock``) on ``<spool>.lock`` is held for the server's life; the kernel
releases it when the process ends however it ends (``kill -9`` included), so a crashed
server never blocks the next start. The file holds the holder's pid, for the message.

A lock that cannot be taken is not skipped: a ``<spool>.lock`` that is a directory, a
symbolic link (dangling or not: each server could follow it somewhere else) or any other
thing than a plain file, or one that cannot be opened, stops the start naming the path —
otherwise two servers would both go on without it. The one exception is a spool directory
AEM cannot write to: then the spool itself cannot be opened either, and it says why.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import IO

from aem.serve.settings import UnusableSetting


class StoreLock:
    """Held from :meth:`acquire` to :meth:`release` (or the end of the process)."""

    def __init__(self, spool_path: Path) -> None:
        self.path = Path(f"{spool_path}.lock")
        self._file: IO[str] | None = None

    def acquire(self) -> StoreLock:
        """Hold the lock, or refuse naming the holder (or what is wrong with the lock
        path). Only a spool directory that is missing and cannot be made, or cannot be
        written, is left to the spool, which says precisely why it cannot be opened (no
        second server can open that spool either)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return self
        if not os.access(self.path.parent, os.W_OK):
            return self
        handle = self._open()
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

    def _open(self) -> IO[str]:
        """The lock file, opened without following a link; anything but a plain file (or
        nothing yet) at the path is an error naming it."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            found = None
        except OSError as exc:
            raise self._unusable(f"cannot be examined ({exc.strerror or exc})") from exc
        if found is not None and not stat.S_ISREG(found.st_mode):
            what = "a directory" if stat.S_ISDIR(found.st_mode) else "not a plain file"
            if stat.S_ISLNK(found.st_mode):
                dangling = "" if self.path.exists() else ", dangling"
                what = f"a symbolic link (to {os.readlink(self.path)!r}{dangling})"
            raise self._unusable(f"is {what}")
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.fdopen(os.open(self.path, flags, 0o644), "a+", encoding="utf-8")
        except OSError as exc:
            raise self._unusable(f"cannot be opened ({exc.strerror or exc})") from exc

    def _unusable(self, problem: str) -> UnusableSetting:
        spool = str(self.path)[: -len(".lock")]
        return UnusableSetting(
            "spool_path",
            f"the lock of {spool}, {self.path}, {problem}: without it a second aem serve "
            "could run on the same spool; remove it (no server holds a lock that is not a "
            "plain file) and start again",
        )

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
