"""A hostile MLflow whose trace search answers a new page of 100 traces for ever: how long
``aem audit --from mlflow://…`` runs and how much memory it holds, with the default
bounds of the whole read (``max_spans``, ``max_bytes``, ``max_seconds``).

Why a bench and not a test: the defaults are what a laptop survives, and that is measured
in seconds and megabytes on this machine, not asserted. The fake is the tests' own
(tests/hostile_backend_kit.py), on loopback; the audit runs as the installed command in a
process of its own, whose peak resident memory is read from ``getrusage``.

    python -m bench.backends.endless_search [--search-page 100] [--url-query ""]

Prints one JSON object: seconds, peak RSS (MB), exit code, spans read, sessions audited
and the issue that ended the read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from bench.command import run_aem
from tests.hostile_backend_kit import EndlessMlflow


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search-page", type=int, default=100)
    parser.add_argument("--url-query", default="", help="e.g. max_seconds=600")
    options = parser.parse_args()
    with EndlessMlflow(search_page=options.search_page) as fake, tempfile.TemporaryDirectory() as d:
        url = fake.url() + (f"?{options.url_query}" if options.url_query else "")
        env = {**os.environ, "AEM_STORE": str(Path(d) / "store.sqlite"), "HF_HUB_OFFLINE": "1"}
        done, seconds, peak_mb = run_aem("audit", "--from", url, "--json", env=env)
        pages = fake.pages
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    stopped = [i["message"] for i in report.get("issues", []) if i["kind"] == "unreadable"]
    print(
        json.dumps(
            {
                "seconds": seconds,
                "peak_rss_mb": peak_mb,
                "exit_code": done.returncode,
                "search_pages_served": pages,
                "spans_read": report.get("spans_read"),
                "sessions_audited": len(report.get("sessions", [])),
                "stopped_by": stopped[:1],
                "stderr_tail": done.stderr.strip().splitlines()[-2:],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
