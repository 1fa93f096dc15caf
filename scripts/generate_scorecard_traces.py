"""Generate ``examples/scorecard/``: runs of a QA pipeline, recorded with the real SDK.

Why generated: the step spans must look exactly like what an instrumented pipeline
exports (the OTLP exporter's own encoder, one span per line as each span ends), and the
scorecard tests build their own runs with the same helpers, so the span contract lives in
one place. Ids and timestamps are seeded, so re-running reproduces the files byte for byte.

The pipeline ``support-qa`` (``examples/scorecard/support-qa.pipeline.yaml``):
transcription → routing → language check → two LLM-analysis steps, ``greeting`` (max 20,
with the blocker criterion ``abusive_language``) and ``resolution`` (max 25).

Run: ``python scripts/generate_scorecard_traces.py [--out examples/scorecard]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from opentelemetry import trace  # noqa: E402
from opentelemetry.trace import Status, StatusCode  # noqa: E402

from aem.scorecards import contract as c  # noqa: E402
from scripts.generate_sample_traces import (  # noqa: E402
    Scope,
    Session,
    epoch_ns,
    fixed_resource,
    write_lines,
)

DEFAULT_OUT = REPO_ROOT / "examples" / "scorecard"
PIPELINE = "support-qa"
SCOPE = Scope("support_qa.pipeline", "1.4.0")
GENERATOR = "scripts/generate_scorecard_traces.py"


@dataclass
class StepRun:
    """One step span: its kind, and for LLM analysis the level-1 results it reports.

    ``scores``: criterion → (value, max); ``blockers``: blocker criterion → fired.
    ``as_events`` writes the results as ``gen_ai.evaluation.result`` events instead of
    attributes; ``running`` leaves the span open (it is never exported).
    """

    name: str
    kind: str
    prompt: str | None = None
    scores: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    blockers: Mapping[str, bool] = field(default_factory=dict)
    as_events: bool = False
    failed: str | None = None
    running: bool = False


def step_attributes(conversation: str, step: StepRun) -> dict[str, object]:
    attrs: dict[str, object] = {
        "gen_ai.conversation.id": conversation,
        c.PIPELINE_NAME: PIPELINE,
        c.STEP_NAME: step.name,
        c.STEP_KIND: step.kind,
    }
    if step.prompt:
        attrs[c.STEP_PROMPT] = step.prompt
    if step.as_events:
        return attrs
    for name, (value, maximum) in step.scores.items():
        attrs[c.criterion_attribute(name, c.FIELD_VALUE)] = value
        attrs[c.criterion_attribute(name, c.FIELD_MAX)] = maximum
    for name, fired in step.blockers.items():
        attrs[c.criterion_attribute(name, c.FIELD_MODE)] = "blocker"
        attrs[c.criterion_attribute(name, c.FIELD_FIRED)] = fired
    return attrs


def add_result_events(span: object, step: StepRun, when: int) -> None:
    for name, (value, maximum) in step.scores.items():
        span.add_event(  # type: ignore[attr-defined]
            c.EVALUATION_EVENT,
            {c.EVENT_NAME: name, c.EVENT_VALUE: value, c.EVENT_MAX: maximum},
            timestamp=when,
        )
    for name, fired in step.blockers.items():
        span.add_event(  # type: ignore[attr-defined]
            c.EVALUATION_EVENT,
            {c.EVENT_NAME: name, c.EVENT_MODE: "blocker", c.EVENT_FIRED: fired},
            timestamp=when,
        )


def record_run(
    session: Session, conversation: str, steps: Sequence[StepRun], *, root_ends: bool = True
) -> None:
    """One pipeline run over a conversation: a root span with one child span per step."""
    tracer = session.provider.get_tracer(SCOPE.name, SCOPE.version)
    root = tracer.start_span(
        f"pipeline {PIPELINE}",
        attributes={"gen_ai.conversation.id": conversation, c.PIPELINE_NAME: PIPELINE},
        start_time=session.clock.advance(1),
    )
    with trace.use_span(root, end_on_exit=False):
        for step in steps:
            span = tracer.start_span(
                f"{step.kind} {step.name}",
                attributes=step_attributes(conversation, step),  # type: ignore[arg-type]
                start_time=session.clock.advance(2),
            )
            if step.as_events:
                add_result_events(span, step, session.clock.advance(40))
            if step.failed:
                span.set_status(Status(StatusCode.ERROR, step.failed))
            if not step.running:
                span.end(end_time=session.clock.advance(60))
    if root_ends:
        root.end(end_time=session.clock.advance(5))


def support_steps(
    greeting: tuple[float, float] | None,
    resolution: tuple[float, float] | None,
    *,
    abusive: bool = False,
    resolution_as_events: bool = True,
    resolution_running: bool = False,
) -> list[StepRun]:
    """The five steps of ``support-qa``; ``greeting`` = (greeted, named company)."""
    steps = [
        StepRun("transcribe", "transcription"),
        StepRun("route", "routing"),
        StepRun("language", "language_check"),
    ]
    if greeting is not None:
        steps.append(
            StepRun(
                "greeting",
                "llm_analysis",
                prompt="greeting-v2",
                scores={"greeted": (greeting[0], 10), "named_company": (greeting[1], 10)},
                blockers={"abusive_language": abusive},
            )
        )
    if resolution is not None or resolution_running:
        solved, clarity = resolution or (0, 0)
        steps.append(
            StepRun(
                "resolution",
                "llm_analysis",
                prompt="resolution-v1",
                scores={"solved": (solved, 15), "clarity": (clarity, 10)},
                as_events=resolution_as_events,
                running=resolution_running,
            )
        )
    return steps


def new_session(seed: str, minute: int) -> Session:
    resource = {**fixed_resource("support-qa-pipeline"), "aem.sample.generator": GENERATOR}
    return Session(seed, resource, epoch_ns(2026, 4, 2, 9, minute))


def conversations() -> dict[str, list[str]]:
    """file name → OTLP/JSON lines, one file per conversation."""
    out: dict[str, list[str]] = {}
    runs = {
        # 8 + 9 = 17 of 20 and 13 + 8 = 21 of 25: 38 / 45 → 84.4, passed (threshold 30)
        "call-1001": dict(greeting=(8, 9), resolution=(13, 8)),
        # 5 + 5 = 10 and 7 + 5 = 12: 22 / 45 → 48.9, not passed
        "call-1002": dict(greeting=(5, 5), resolution=(7, 5)),
        # resolution has not reported yet: pending, waiting on "resolution"
        "call-1003": dict(greeting=(9, 9), resolution=None),
        # the greeting's blocker fires while resolution still runs: 0, not passed
        "call-1004": dict(greeting=(10, 10), resolution=None, abusive=True),
    }
    for minute, (conversation, kwargs) in enumerate(runs.items()):
        session = new_session(conversation, minute)
        # The orchestrator's root span ends once it has dispatched the steps; a step that
        # is still running has not ended, so it is not in the file.
        running = kwargs.get("resolution") is None
        steps = support_steps(**kwargs, resolution_running=running)  # type: ignore[arg-type]
        record_run(session, conversation, steps)
        out[f"{conversation}.otlp.jsonl"] = session.lines()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    out: Path = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in conversations().items():
        write_lines(out / name, lines)
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
