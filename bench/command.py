"""An ``aem`` command run as a user runs it, in a process of its own: its answer, the
seconds it took and its peak resident memory (``getrusage`` of the children, so run one
command per bench process for the figure to be that command's)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

AEM = str(Path(sys.executable).with_name("aem"))


def run_aem(
    *args: str, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """``aem ARGS``: the finished process, its wall-clock seconds and peak RSS in MB."""
    started = time.monotonic()
    done = subprocess.run(
        [AEM, *args], env=dict(env) if env is not None else None, capture_output=True, text=True
    )
    seconds = time.monotonic() - started
    peak_mb = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return done, round(seconds, 1), peak_mb
