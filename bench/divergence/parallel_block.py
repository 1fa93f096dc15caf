"""``aem diverge`` on one model turn that makes N parallel calls, run twice: seconds and
peak memory.

Why: matching a parallel block compared every call of one run with every call of the
other — 1,500 calls took 45 s and 943 MB, 3,000 were killed at 338 s and 3 GB. Identical
calls are now paired by hashing first (aem.runs.divergence); this measures the whole command
(reading both files, assembling, matching) as a user runs it, in a process of its own.

    python -m bench.divergence.parallel_block [--calls 3000] [--changed 1234]

Prints one JSON object: the calls, each file's size, seconds, peak RSS (MB), exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.command import run_aem
from tests.agent_kit import GenAIAgent, ToolCall, ToolSpec, message, record, text_part


def _agent(calls: int, changed: int | None) -> Any:
    def build(recording: Any) -> None:
        agent = GenAIAgent(recording, "forecast", "gpt-4o", [ToolSpec("weather", "weather", {})])
        block = [
            ToolCall(
                f"c{n}",
                "weather",
                {"city": "Oslo" if n == changed else f"city-{n}", "day": n % 7},
                '{"celsius": 4}',
            )
            for n in range(calls)
        ]
        question = [message("user", text_part("The week's weather everywhere"))]
        with agent.invoke_agent("forecaster", root=True):
            first = agent.chat(question, calls=block)
            for call in block:
                with agent.execute_tool(call):
                    pass
            agent.chat([*question, first], text="Mild everywhere.")

    return build


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--changed", type=int, default=1234, help="-1: runs alike")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        before, after = Path(work) / "before.jsonl", Path(work) / "after.jsonl"
        record(before, "r1", _agent(options.calls, None))
        changed = None if options.changed < 0 else options.changed
        record(after, "r2", _agent(options.calls, changed))
        done, seconds, peak_mb = run_aem("diverge", str(before), str(after), "--json")
        sizes = [before.stat().st_size, after.stat().st_size]
    found = json.loads(done.stdout) if done.stdout.strip() else {}
    firsts = [s["first"] for s in found.get("sessions", []) if s.get("first")]
    print(
        json.dumps(
            {
                "calls": options.calls,
                "file_bytes": sizes,
                "seconds": seconds,
                "peak_rss_mb": peak_mb,
                "exit_code": done.returncode,
                "first": firsts[:1],
                "stderr_tail": done.stderr.strip().splitlines()[-2:],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
