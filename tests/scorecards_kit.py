"""Helpers for the scorecard tests: pipeline runs recorded with the real OTel SDK, configs
written to files, and the real CLI.

Runs come from ``scripts/generate_scorecard_traces.py`` (the same code that writes the
samples), so the tests exercise exactly the span contract the samples document.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from scripts.generate_sample_traces import write_lines
from scripts.generate_scorecard_traces import StepRun, new_session, record_run, support_steps

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO / "examples" / "scorecard"
SAMPLE_CONFIG = SAMPLE_DIR / "support-qa.scorecard.toml"
SAMPLE_PIPELINE = SAMPLE_DIR / "support-qa.pipeline.yaml"

__all__ = ["StepRun", "support_steps"]


def write_run(
    path: Path, conversation: str, steps: Sequence[StepRun], *, seed: str = "", minute: int = 0
) -> Path:
    """One pipeline run as an OTLP/JSON file (a new seed gives a new trace)."""
    session = new_session(seed or conversation, minute)
    record_run(session, conversation, steps)
    write_lines(path, session.lines())
    return path


def cli(*args: str) -> tuple[int, str, str]:
    """``aem ARGS`` through the real CLI: (exit code, stdout, stderr)."""
    from aem.cli import app

    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def audit_scorecard(
    store: Path, config: Path, *paths: Path, json_: bool = False
) -> tuple[int, str, str]:
    """``aem audit PATHS --scorecard CONFIG --store STORE [--json]`` through the real CLI."""
    args = ["audit", *map(str, paths), "--scorecard", str(config), "--store", str(store)]
    return cli(*args, "--no-progress", *(["--json"] if json_ else []))


def audit_totals(store: Path, config: Path, *paths: Path) -> dict[str, dict[str, Any]]:
    """``aem audit PATHS --scorecard CONFIG --json``: the totals by conversation."""
    code, out, err = audit_scorecard(store, config, *paths, json_=True)
    assert code in (0, 1), err
    return {s["total"]["conversation"]: s for s in json.loads(out)["scorecards"]}


def show(store: Path) -> dict[str, dict[str, Any]]:
    """``aem scorecard show --json``: the conversation list by conversation."""
    code, out, err = cli("scorecard", "show", "--store", str(store), "--json")
    assert code == 0, err
    return {s["conversation"]: s for s in json.loads(out)}


def versions(store: Path, conversation: str) -> list[dict[str, Any]]:
    code, out, err = cli("scorecard", "versions", conversation, "--store", str(store), "--json")
    assert code == 0, err
    return list(json.loads(out))


PIPELINE_HEAD = """name: {name}
steps:
  - {{name: transcribe, kind: transcription}}
  - {{name: route, kind: routing}}
  - {{name: language, kind: language_check}}
"""


def write_pipeline(path: Path, llm_steps: dict[str, dict[str, float] | None]) -> Path:
    """A pipeline definition: the three non-scoring steps plus LLM steps.

    ``llm_steps``: step → {criterion: max} (its prompt ``<step>-p``), or None for a prompt
    with no level-1 scoring.
    """
    lines = [PIPELINE_HEAD.format(name="support-qa")]
    lines += [f"  - {{name: {s}, kind: llm_analysis, prompt: {s}-p}}\n" for s in llm_steps]
    lines.append("prompts:\n")
    for step, criteria in llm_steps.items():
        if criteria is None:
            lines.append(f"  {step}-p: {{}}\n")
            continue
        lines.append(f"  {step}-p:\n    scoring:\n      criteria:\n")
        lines += [f"        - {{name: {n}, max: {m}}}\n" for n, m in criteria.items()]
    path.write_text("".join(lines))
    return path


def write_config(
    path: Path,
    weights: dict[str, float] | None,
    *,
    definition: Path,
    threshold: float = 30,
    qa: bool = True,
    scale_max: float | None = None,
) -> Path:
    """A scorecard config (TOML); ``weights=None`` leaves out [level2] entirely."""
    text = f'definition = "{definition}"\nqa = {str(qa).lower()}\n'
    if weights is not None:
        scale = f", max = {scale_max}" if scale_max is not None else ""
        text += f"\n[level2]\npass_threshold = {threshold}\nscale = {{ min = 0{scale} }}\n"
        for step, weight in weights.items():
            text += f'\n[[level2.participation]]\nstep = "{step}"\nweight = {weight}\n'
    path.write_text(text)
    return path
