"""The command line and environment that start ``aem serve`` on loopback for a bench or
a test: ephemeral ports written to a ports file, a spool of its own, verdicts perhaps to a
JSON-lines file. Kept in one place so the benches and the serve tests start the same
server, and a flag renamed in the server is renamed once here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def serve_command(spool: Path, ports_file: Path, jsonl: Path | None = None) -> list[str]:
    """``python -m aem.serve`` on ports the kernel picks, announced in ``ports_file``."""
    return [
        sys.executable,
        "-m",
        "aem.serve",
        "--grpc-port",
        "0",
        "--http-port",
        "0",
        "--spool-path",
        str(spool),
        "--ports-file",
        str(ports_file),
        *(["--jsonl-path", str(jsonl)] if jsonl is not None else []),
    ]


def serve_environment(root: Path = ROOT) -> dict[str, str]:
    """This checkout importable, and tokenizers kept from forking threads into workers."""
    return {**os.environ, "PYTHONPATH": str(root), "TOKENIZERS_PARALLELISM": "false"}
