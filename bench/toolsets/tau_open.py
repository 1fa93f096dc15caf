"""tau-bench without ``match_tools``: do extra look-ups pass and extra writes still fail?

The development cases scope the match to the write tools (``match_tools``), which leaves
every other call free. This check drops that scope, marks the case's expected calls to
tools outside it optional (the reference's look-ups: the agent may have known the value),
and runs ``bench.tau_agreement`` under each ``[matching] extra_calls``. Needs
``AEM_DEV_DATA`` (``bench.devdata``).

Run: ``python -m bench.toolsets.tau_open``
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from bench import tau_agreement
from bench.devdata import dev_set

MODES = ("fail", "writes", "allow")


def open_cases(source: Path, target: Path) -> None:
    """The cases without ``match_tools``; calls outside it optional; traces linked."""
    lines = []
    for line in (source / "references.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        scope = set(case.pop("match_tools", None) or [])
        for call in case.get("expected_tool_calls") or []:
            if scope and call["name"] not in scope:
                call["optional"] = True
        lines.append(json.dumps(case))
    (target / "references.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.symlink((source / "traces.otlp.jsonl").resolve(), target / "traces.otlp.jsonl")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder)
        open_cases(dev_set("tau-bench-airline-dev"), target)
        for mode in MODES:
            print(f"\n[matching] extra_calls = {mode!r}, no match_tools:")
            tau_agreement.main([str(target), "--set", f'matching.extra_calls="{mode}"'])
    return 0


if __name__ == "__main__":
    sys.exit(main())
