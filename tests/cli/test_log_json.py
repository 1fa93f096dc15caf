"""``aem serve`` logs stay one JSON object per line, even when what is logged is hostile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_exception_with_undecodable_path_is_still_logged_as_json(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # A path with a byte that is not UTF-8: Python hands it on as a lone surrogate, which
    # the JSON encoder refused, so logging printed a plain-text traceback instead.
    spool = os.fsencode(blocker) + b"/x\xff/spool.sqlite"
    command = [
        os.fsencode(sys.executable), b"-c", b"from aem.cli import main; main()", b"serve",
        b"--set", b"serve.grpc_port=-1",
        b"--set", b"serve.http_port=0",
        b"--set", b'serve.spool_path="' + spool + b'"',
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(command, capture_output=True, env=env, timeout=120, check=False)
    assert result.returncode != 0  # it cannot start; the point is how that is logged
    lines = result.stderr.decode("utf-8").splitlines()
    records = [json.loads(line) for line in lines]  # every line, or this raises
    [failure] = [r for r in records if r["msg"].startswith("cannot start")]
    assert failure["level"] == "error" and "x\\udcff" in failure["msg"]


def test_thread_that_dies_is_logged_as_json() -> None:
    script = (
        "import threading\n"
        "from aem.serve.ops import setup_logging\n"
        "setup_logging('INFO')\n"
        "t = threading.Thread(target=lambda: 1 / 0, name='evaluator')\n"
        "t.start(); t.join()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    [record] = [json.loads(line) for line in result.stderr.splitlines()]
    assert record["msg"] == "thread evaluator died" and "ZeroDivisionError" in record["exc"]
