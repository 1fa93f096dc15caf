"""Who&When: does AEM blame the labelled member and step, beside trivial blamers.

AEM's attribution is ``bench.whowhen.run``'s (its earliest root cause). Baselines, each
on the same sessions: the member with the most messages (at its first message); the first
failed code run (blamed on the member whose message held the code, at that message);
the sender of the last message; and a uniform guess's expected accuracy.

Proven and suspected side by side. Accuracy over all sessions counts a session with no
root cause as a miss, so it cannot tell "AEM is wrong" from "AEM proves nothing". Per
subset, three more readings split it:

* *coverage* — the share of sessions with a root cause at all;
* *precision* — on the sessions with a root cause, the share whose earliest root cause
  names the labelled agent / step, with the baselines on those same sessions (a rule
  that proves only the easy sessions must beat the floor *there*);
* the *first suspect* (``SessionReport.suspects``, the earliest suspect turn), read only
  on sessions with no root cause and at least one suspect, with the baselines on those
  same sessions. Only there because a suspect is the answer to "nothing is proven, where
  to look"; where a root cause exists it is AEM's answer (``bench.whowhen.run`` says more).

The accuracy rows also carry "AEM root cause, else first suspect": the union a reader
is handed, over all sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.agreement import otlp
from bench.agreement.baselines import (
    CODE_RUN,
    MESSAGE,
    OTHER,
    Guess,
    Step,
    first_failed_code_run,
    last_speaker,
    most_messages,
    random_chance,
    run_failed,
)
from bench.agreement.figures import Cell, Figure, figure, mean, share
from bench.agreement.split import half
from bench.whowhen.run import SUBSETS, Attribution, run_subset, subset_references

SET = "whowhen"
DIRECTORY = "whowhen-dev"
BASELINES: dict[str, Callable[[list[Step]], Guess]] = {
    "most messages": most_messages,
    "first failed code run": first_failed_code_run,
    "last speaker": last_speaker,
}
EITHER = "AEM root cause, else first suspect"
SUSPECT = "AEM first suspect"


@dataclass(frozen=True)
class WhoRow:
    """One labelled session: the label, AEM's guess and each baseline's."""

    true_agent: str
    true_step: int
    guesses: dict[str, Guess]
    chance: tuple[float, float]
    proven: bool = False  # AEM named a root cause (``guesses["AEM"]`` is it)
    suspect: Guess | None = None  # the first suspect, when there is no root cause


def steps_of(spans: list[otlp.SpanView], reference: dict[str, Any]) -> list[Step]:
    """The session's history steps (``derived.step_span_ids`` order) as baselines see them."""
    by_id = {s.span_id: s for s in spans}
    steps = []
    for index, span_id in enumerate(reference["derived"]["step_span_ids"]):
        span = by_id.get(span_id)
        if span is None:
            continue
        speaker = str(
            span.attributes.get("gen_ai.agent.name") or span.attributes.get("whowhen.speaker")
        )
        if span.operation == "execute_tool":
            result = str(span.attributes.get("gen_ai.tool.call.result", ""))
            steps.append(Step(index, speaker, CODE_RUN, run_failed(span.error, result)))
        elif span.operation == "chat":
            steps.append(Step(index, speaker, MESSAGE))
        else:
            steps.append(Step(index, speaker, OTHER))
    return steps


def row(aem: Attribution, steps: list[Step]) -> WhoRow:
    guesses = {"AEM": Guess(aem.agent, aem.step)}
    suspect = Guess(*aem.suspect) if aem.suspect_used and aem.suspect else None
    guesses[EITHER] = suspect or guesses["AEM"]
    if suspect is not None:
        guesses[SUSPECT] = suspect
    guesses.update({name: blame(steps) for name, blame in BASELINES.items()})
    return WhoRow(aem.true_agent, aem.true_step, guesses, random_chance(steps), aem.proven, suspect)


def figures(subset: str, rows: list[tuple[str, WhoRow]]) -> list[Figure]:
    """Agent and step accuracy of AEM and every baseline on one subset, then the proven
    root causes' coverage and precision and the first suspect's accuracy where used."""
    result = []
    for level in ("agent", "step"):
        result += _compared(f"{subset} {level} accuracy", ("AEM", EITHER), level, rows)
    return result + proven_figures(subset, rows) + suspect_figures(subset, rows)


def proven_figures(subset: str, rows: list[tuple[str, WhoRow]]) -> list[Figure]:
    """Coverage (sessions with a root cause) and, on those sessions, precision."""
    proven = [(h, r) for h, r in rows if r.proven]
    result = [
        figure(SET, f"{subset} root-cause coverage", "AEM", rows, lambda rs: share(_proven(rs)))
    ]
    for level in ("agent", "step"):
        name = f"{subset} {level} precision (sessions with a root cause)"
        result += _compared(name, ("AEM",), level, proven)
    return result


def suspect_figures(subset: str, rows: list[tuple[str, WhoRow]]) -> list[Figure]:
    """How often the first suspect stands in, and its accuracy on the sessions it does."""
    unproven = [(h, r) for h, r in rows if not r.proven]
    used = [(h, r) for h, r in unproven if r.suspect is not None]
    result = [
        figure(
            SET,
            f"{subset} first suspect used (no root cause)",
            SUSPECT,
            unproven,
            lambda rs: share([r.suspect is not None for r in rs]),
        )
    ]
    for level in ("agent", "step"):
        result += _compared(f"{subset} first suspect {level} accuracy", (SUSPECT,), level, used)
    return result


def _compared(
    name: str, ours: tuple[str, ...], level: str, rows: list[tuple[str, WhoRow]]
) -> list[Figure]:
    """One figure for AEM's methods ``ours``, every baseline and random, on ``rows``."""
    result = [figure(SET, name, m, rows, _accuracy(m, level)) for m in (*ours, *BASELINES)]
    return [*result, figure(SET, name, "random (expected)", rows, _chance(level))]


def _proven(rows: Sequence[WhoRow]) -> list[bool]:
    return [r.proven for r in rows]


def _accuracy(method: str, level: str) -> Callable[[Sequence[WhoRow]], Cell]:
    def hits(rows: Sequence[WhoRow]) -> Cell:
        if level == "agent":
            return share([r.guesses[method].agent == r.true_agent for r in rows])
        return share([r.guesses[method].step == r.true_step for r in rows])

    return hits


def _chance(level: str) -> Callable[[Sequence[WhoRow]], Cell]:
    index = 0 if level == "agent" else 1
    return lambda rows: mean([r.chance[index] for r in rows])


def measure(root: Path, workers: int) -> list[Figure]:
    data = root / DIRECTORY
    result = []
    for subset, stem in SUBSETS.items():
        attributions = {a.session_id: a for a in run_subset(data, stem, [], workers)}
        spans = dict(otlp.sessions(data / f"{stem}.otlp.jsonl"))
        rows = [
            (half(SET, sid), row(attributions[sid], steps_of(spans.get(sid, []), ref)))
            for ref in subset_references(data, stem)
            if (sid := ref["session_id"]) in attributions
        ]
        result += figures(subset, rows)
    return result
