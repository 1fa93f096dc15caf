"""Ending the evaluation workers (``serve.workers``): a worker that goes while its
``/proc`` entry is being read is gone, not an error that fails the server's stop."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aem.serve import workers


class _VanishingStat:
    """What ``open('/proc/PID/stat')`` gives when the process is reaped between the open
    and the read: the kernel answers the read with ESRCH."""

    def __enter__(self) -> _VanishingStat:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self) -> bytes:
        raise ProcessLookupError(3, "No such process")


def test_a_process_that_goes_mid_read_counts_as_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "open", lambda *a, **k: _VanishingStat(), raising=False)
    assert workers._alive(1) is False


def test_ending_processes_stops_a_real_child_and_tolerates_one_already_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    workers._end_processes([child.pid, gone.pid], grace=5.0)
    assert child.wait(timeout=10) != 0  # ended by a signal, long before its 60 s
