"""Write or check the golden JSON reports that pin AEM's verdicts across refactors.

Why: a restructuring must not change a single verdict. The golden files were written
by the code as it stood before a refactor; ``tests/report/test_golden_reports.py`` compares
every later run to them byte for byte. Rewrite them (``--write``) only when a change
*means* to alter verdicts, and say so in the commit and the CHANGELOG.

    python -m scripts.golden_reports --write   # regenerate tests/golden/*.json
    python -m scripts.golden_reports           # check (exit 1 on any difference)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"

# name -> (trace paths, cases file or None); paths relative to the repository root so
# that the reports (which name their sources) are the same wherever the repo lives.
INPUTS: dict[str, tuple[list[str], str | None]] = {
    "sample_traces": (["sample_traces"], "sample_traces/cases.jsonl"),
    "instrumented": (["tests/fixtures/instrumented"], None),
    "tau_bench": (
        ["tests/fixtures/tau_bench/traces.otlp.jsonl.gz"],
        "tests/fixtures/tau_bench/references.jsonl",
    ),
}


def render(name: str) -> str:
    """The JSON report of one golden input, as ``aem audit --json`` prints it."""
    from typer.testing import CliRunner

    from aem.cli import app

    paths, cases = INPUTS[name]
    args = ["audit", *paths, "--json", "--no-progress"]
    if cases:
        args += ["--cases", cases]
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        result = CliRunner().invoke(app, args)
    finally:
        os.chdir(cwd)
    if result.exit_code not in (0, 1):
        raise RuntimeError(f"aem audit on {name} exited {result.exit_code}: {result.output}")
    return result.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the golden files")
    args = parser.parse_args()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    status = 0
    for name in INPUTS:
        target = GOLDEN / f"{name}.report.json"
        text = render(name)
        if args.write:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(REPO)}")
        elif target.read_text(encoding="utf-8") != text:
            print(f"DIFFERS: {name}")
            status = 1
        else:
            print(f"same: {name}")
    return status


if __name__ == "__main__":
    sys.exit(main())
