"""Runs of any size, made from the bundled samples, and ``aem audit`` run as a user runs
it: a separate process whose output goes to a pipe (not a terminal, as in CI or
``make demo | tee``).

Each copy of a sample session gets its own conversation id and trace ids, and its case
is copied under the new id, so every copy fails (or passes) exactly as the sample does.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.conftest import REPO, SAMPLES

# session id in the samples -> the file that holds it
SAMPLE_FILES = {
    "refunds-march": "march_refunds.otlp.jsonl",  # a root cause, four turns inheriting it
    "trip-planner-7": "parallel_tools.otlp.jsonl",  # a failed tool, the answer inheriting it
    "weather-genai": "weather_genai.otlp.jsonl",  # no failure
}


def _sample_cases() -> dict[str, str]:
    lines = (SAMPLES / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["session_id"]: line for line in lines if line.strip()}


def copy_sessions(folder: Path, counts: dict[str, int]) -> tuple[Path, Path]:
    """``counts[sample]`` copies of each sample session, as one trace file and one cases
    file in ``folder``; copy ``n`` of ``refunds-march`` is session ``refunds-march-0n``."""
    cases = _sample_cases()
    trace_lines: list[str] = []
    case_lines: list[str] = []
    number = 0
    for session_id, count in counts.items():
        text = (SAMPLES / SAMPLE_FILES[session_id]).read_text(encoding="utf-8")
        for copy in range(count):
            number += 1
            new_id = f"{session_id}-{copy:02d}"
            for line in text.splitlines():
                trace_lines.append(_renamed(line, session_id, new_id, number))
            case_lines.append(cases[session_id].replace(f'"{session_id}"', f'"{new_id}"', 1))
    traces, cases_path = folder / "run.otlp.jsonl", folder / "cases.jsonl"
    traces.write_text("\n".join(trace_lines) + "\n", encoding="utf-8")
    cases_path.write_text("\n".join(case_lines) + "\n", encoding="utf-8")
    return traces, cases_path


def _renamed(line: str, session_id: str, new_id: str, number: int) -> str:
    """One OTLP/JSON line with the session's id replaced and trace ids made unique."""
    document = json.loads(line.replace(f'"{session_id}"', f'"{new_id}"'))
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["traceId"] = f"{number:08x}" + span["traceId"][8:]
    return json.dumps(document)


def piped_audit(*args: str, columns: int | None = None) -> tuple[int, str]:
    """``aem audit ARGS`` in its own process, stdout a pipe; (exit code, stdout)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run(
        [sys.executable, "-m", "aem.cli", "audit", *args, "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout


def session_titles(output: str) -> list[str]:
    """The ids of the sessions the output tables (each table's ``session ID`` title)."""
    return [line.split()[1] for line in output.splitlines() if line.startswith("session ")]


def split_names(output: str, names: Sequence[str]) -> list[str]:
    """Where a name is broken across two lines: its head ends a line (or a table cell)
    and its tail starts the next line at the same column, or at its start."""
    lines = output.splitlines()
    found = []
    for upper, lower in itertools.pairwise(lines):
        for name in names:
            for cut in range(1, len(name)):
                head, tail = name[:cut], name[cut:]
                start = upper.find(head)
                while start != -1:
                    end = start + len(head)
                    at_word = start == 0 or upper[start - 1] in " │┃(,"
                    at_edge = at_word and (
                        end == len(upper.rstrip()) or upper[end : end + 2] in (" │", " ┃")
                    )
                    if at_edge and (
                        lower[start : start + len(tail)] == tail or lower.lstrip().startswith(tail)
                    ):
                        found.append(f"{head!r} / {tail!r}")
                    start = upper.find(head, start + 1)
    return found
