"""What the verdicts for the sample sessions must be: ``aem audit --json`` on the same
files, flattened for comparison with what ``aem serve`` delivered."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
CASES = SAMPLES / "cases.jsonl"


def sample_files() -> list[Path]:
    return sorted(SAMPLES.glob("*.otlp.jsonl"))


def sessions_in(files: list[Path]) -> int:
    """How many sessions ``files`` hold (a sample file may hold several: the help-desk file
    holds seven), as ``aem audit`` counts them."""
    return len({session for (session, _, _), _ in _audit(tuple(files))})


# A session's label is its turns' first label in this order, else ``ok``.
ROLLUP_ORDER = ("root_cause", "prior_action_failed", "suspect")
SESSION = "aem.session"


def expected_verdicts(files: list[Path]) -> dict[tuple[str, str, str], tuple]:
    """``(session, evaluated span, metric | 'aem.label') → (outcome/label, score)``."""
    return {key: value for key, value in _audit(tuple(files)) if key[2] != SESSION}


def expected_session_labels(files: list[Path]) -> dict[str, str]:
    """``session → label`` of each session's own verdict item."""
    return {key[0]: value[0] for key, value in _audit(tuple(files)) if key[2] == SESSION}


def delivered_session_labels(lines: list[dict]) -> dict[str, str]:
    """``session → label`` of the session items delivered, each exactly once."""
    out: dict[str, str] = {}
    for line in lines:
        if line["kind"] == "session":
            assert line["session_id"] not in out, f"session delivered twice: {line}"
            out[line["session_id"]] = line["label"]
    return out


@functools.lru_cache(maxsize=4)
def _audit(files: tuple[Path, ...]) -> tuple[tuple[tuple[str, str, str], tuple], ...]:
    """What ``aem audit FILES --cases CASES --json`` says about the same spans."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "aem.cli",
            "audit",
            *map(str, files),
            "--cases",
            str(CASES),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=SAMPLES.parent,
    )
    assert run.returncode in (0, 1), run.stderr[-3000:]
    out: dict[tuple[str, str, str], tuple] = {}
    for session in json.loads(run.stdout)["sessions"]:
        labels = {t["label"] for t in session["turns"]}
        rolled = next((label for label in ROLLUP_ORDER if label in labels), "ok")
        out[(session["session_id"], "", SESSION)] = (rolled, None)
        for turn in session["turns"]:
            span = turn["span_ids"][0]
            out[(session["session_id"], span, "aem.label")] = (turn["label"], None)
            for metric in turn["metrics"]:
                out[(session["session_id"], span, metric["name"])] = (
                    metric["outcome"],
                    metric["score"],
                )
    return tuple(out.items())


def delivered_verdicts(lines: list[dict]) -> dict[tuple[str, str, str], tuple]:
    out: dict[tuple[str, str, str], tuple] = {}
    for line in lines:
        if line["kind"] == "session":
            continue  # delivered_session_labels
        if line["kind"] == "turn":
            key = (line["session_id"], line["span_id"], "aem.label")
            value: tuple = (line["label"], None)
        else:
            key = (line["session_id"], line["span_id"], line["name"])
            value = (line["outcome"], line["score"])
        assert key not in out, f"verdict delivered twice: {key}"
        out[key] = value
    return out


def assert_same_verdicts(delivered: dict, expected: dict, tolerance: float = 1e-4) -> None:
    """Same keys, same outcomes and labels; scores equal up to float noise.

    Why a tolerance: embedding scores depend slightly (≈1e-7) on which texts shared an
    encode batch, which differs between a file audit and live arrival order; a verdict
    difference is an outcome or label difference, never the 7th decimal of a cosine.
    """
    assert delivered.keys() == expected.keys(), (
        sorted(delivered.keys() - expected.keys()),
        sorted(expected.keys() - delivered.keys()),
    )
    diff = {}
    for key, (outcome, score) in expected.items():
        got_outcome, got_score = delivered[key]
        same_score = (score is None and got_score is None) or (
            score is not None and got_score is not None and abs(score - got_score) <= tolerance
        )
        if got_outcome != outcome or not same_score:
            diff[key] = {"delivered": delivered[key], "expected": expected[key]}
    assert not diff, diff
