"""How far a metric's verdicts agree with people's: Cohen's κ, its interval, every miss.

Why κ and not accuracy: a judge that passes everything agrees with 90 % of labels when
90 % of answers are fine, and has learned nothing. κ discounts the agreement the two base
rates give by chance, so both base rates are printed beside it. Why a bootstrap interval:
with 40 labels a κ of 0.7 can be anything from 0.4 to 0.9, and a CI gate should know.

Labels are one JSON object per line: ``{"id": "<session>/<turn>", "label": "pass"}`` (or
``"session_id"`` and ``"turn_id"`` fields; an id without a turn is the session as a whole:
it fails when the metric failed any of its turns). The verdicts are a JSON report of
``aem audit --out``, so this works for any metric, the embedded default judge and a
configured one alike (``judge.step`` and the checks are metrics there).

A label whose item the run did not score (no result, or ``unverified`` / ``skip`` /
``error``) is not in κ and not dropped either: it is counted by outcome and listed.
``unverified`` is never a pass: a session as a whole is ``fail`` when the metric failed
any of its turns, else ``unverified`` when it left one unverified (so it is not in κ),
else ``pass`` when it passed one (:data:`UNVERIFIED_RULE`, printed with the result).

Each item counts once. The same labels repeated 200 times would otherwise turn a κ of
0.42 into 0.995 with an interval as narrow as 200 times the labels make it: repeats of an
id are collapsed to one (said in the result), or refused (``duplicates="refuse"``); an id
labelled both pass and fail is a conflict the people must settle, listed and left out.
The interval is a bootstrap over the four cells of the confusion matrix (a resample of
``n`` pairs is a multinomial draw of them), vectorised: 100,000 labels take milliseconds.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from aem.foundation.model import AuditReport, MetricResult, Outcome

Verdict = Literal["pass", "fail"]
Duplicates = Literal["collapse", "refuse"]
_BOOTSTRAP_SEED = 20261204
# How many ids a refusal or a warning names before "…".
_NAMED_IDS = 5


class HumanLabel(BaseModel):
    """One person's verdict on one item (a session's turn, or a whole session)."""

    session_id: str
    turn_id: str | None = None
    label: Verdict
    line: int

    @property
    def key(self) -> str:
        return f"{self.session_id}/{self.turn_id}" if self.turn_id else self.session_id


class Miss(BaseModel):
    """An item on which the metric and the person disagree, with where to look."""

    id: str
    session_id: str
    turn_id: str | None
    human: Verdict
    metric: Verdict
    explanation: str = ""


class Agreement(BaseModel):
    """The agreement of one metric with people, and everything that did not enter it."""

    metric: str
    scored: int
    kappa: float | None
    kappa_low: float | None = None
    kappa_high: float | None = None
    kappa_undefined: str | None = None
    observed_agreement: float | None = None
    human_fail_rate: float | None = None
    metric_fail_rate: float | None = None
    # confusion[human][metric]
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    false_passes: list[Miss] = Field(default_factory=list)
    false_fails: list[Miss] = Field(default_factory=list)
    unscored: dict[str, int] = Field(default_factory=dict)
    unscored_ids: list[str] = Field(default_factory=list)
    # Label lines that repeated an id already labelled the same way: counted once.
    duplicates_collapsed: int = 0
    # Ids labelled both pass and fail: not in κ until the people settle them.
    conflicting_ids: list[str] = Field(default_factory=list)


def unique_labels(
    labels: Iterable[HumanLabel], duplicates: Duplicates = "collapse"
) -> tuple[list[HumanLabel], int, list[str]]:
    """Each labelled id once: the labels kept (first line of each id), the repeated lines
    collapsed, and the ids labelled both ways (dropped). ``duplicates="refuse"``: any
    repeat raises ``ValueError`` naming the ids and their lines."""
    lines: dict[str, list[HumanLabel]] = defaultdict(list)
    for label in labels:
        lines[label.key].append(label)
    repeated = {key: found for key, found in lines.items() if len(found) > 1}
    if repeated and duplicates == "refuse":
        named = "; ".join(
            f"{key!r} on lines {', '.join(str(x.line) for x in found)}"
            for key, found in list(repeated.items())[:_NAMED_IDS]
        )
        more = f" and {len(repeated) - _NAMED_IDS} more" if len(repeated) > _NAMED_IDS else ""
        raise ValueError(
            f"{len(repeated)} id(s) labelled more than once: {named}{more}; each item is "
            "labelled once (--duplicates collapse counts each id once)"
        )
    conflicts = [key for key, found in repeated.items() if len({x.label for x in found}) > 1]
    kept = [found[0] for key, found in lines.items() if key not in set(conflicts)]
    collapsed = sum(len(found) - 1 for key, found in repeated.items() if key not in conflicts)
    return kept, collapsed, conflicts


def read_labels(path: Path) -> list[HumanLabel]:
    """Human labels, one JSON object per line; a bad line is an error naming it."""
    labels: list[HumanLabel] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
            labels.append(_label(item, number))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{path}:{number}: not a label ({exc})") from exc
    if not labels:
        raise ValueError(f"{path}: no labels")
    return labels


def _label(item: object, number: int) -> HumanLabel:
    if not isinstance(item, dict):
        raise TypeError("expected an object")
    label = item.get("label")
    if label not in ("pass", "fail"):
        raise ValueError(f"label must be 'pass' or 'fail', got {label!r}")
    if "session_id" in item:
        session, turn = str(item["session_id"]), item.get("turn_id")
    else:
        session, _, turn = str(item["id"]).partition("/")
    return HumanLabel(session_id=session, turn_id=str(turn) if turn else None, label=label,
                      line=number)  # fmt: skip


# How ``unverified`` enters the agreement: said with every result, never left implicit.
UNVERIFIED_RULE = (
    "unverified is neither pass nor fail: an unverified turn is not in κ, nor is a session "
    "whose turns include one and no failed turn"
)


def _outcomes(report: AuditReport, metric: str) -> dict[str, tuple[Outcome, str]]:
    """Per item id, the metric's outcome and explanation: turns, and sessions as wholes."""
    found: dict[str, tuple[Outcome, str]] = {}
    for session in report.sessions:
        results = [m for turn in session.turns for m in turn.metrics if m.name == metric]
        for result in results:
            found[f"{session.session_id}/{result.turn_id}"] = (result.outcome, _said(result))
        if results:
            found[session.session_id] = _session_outcome(results)
    return found


def _said(result: MetricResult) -> str:
    """The metric's explanation, or what its outcome means when it gave none: a miss is
    never listed with an empty reason."""
    if result.explanation.strip():
        return result.explanation
    return f"{result.outcome.value} (the metric gave no explanation)"


def _session_outcome(results: Sequence[MetricResult]) -> tuple[Outcome, str]:
    """A session as a whole: failed if any turn failed; else unverified if a turn was left
    unverified (not a pass: nothing proved it right); else passed if any passed; else the
    first result's outcome (skipped, error: not scored). The explanation names the turns."""
    by_outcome: dict[Outcome, list[MetricResult]] = defaultdict(list)
    for result in results:
        by_outcome[result.outcome].append(result)
    for outcome in (Outcome.FAIL, Outcome.UNVERIFIED, Outcome.PASS):
        if by_outcome[outcome]:
            break
    else:
        return results[0].outcome, _said(results[0])
    found = by_outcome[outcome]
    turns = ", ".join(r.turn_id for r in found[:_NAMED_IDS])
    turns += f" and {len(found) - _NAMED_IDS} more" if len(found) > _NAMED_IDS else ""
    counts = ", ".join(f"{len(by_outcome[o])} {o.value}" for o in Outcome if by_outcome[o])
    if outcome is Outcome.PASS:
        return outcome, f"passed turn(s) {turns}, failed none ({counts})"
    return outcome, f"{outcome.value} on turn(s) {turns} ({counts}); {found[0].turn_id}: " + _said(
        found[0]
    )


def kappa(pairs: Sequence[tuple[Verdict, Verdict]]) -> float | None:
    """Cohen's κ of (human, metric) pairs; None when chance agreement is total.

    >>> kappa([("pass", "pass"), ("fail", "fail"), ("pass", "fail"), ("fail", "fail")])
    0.5
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for h, m in pairs if h == m) / n
    human_fail = sum(1 for h, _ in pairs if h == "fail") / n
    metric_fail = sum(1 for _, m in pairs if m == "fail") / n
    chance = human_fail * metric_fail + (1 - human_fail) * (1 - metric_fail)
    if chance >= 1.0:
        return None
    return round((observed - chance) / (1 - chance), 6)


def _interval(
    pairs: Sequence[tuple[Verdict, Verdict]], rounds: int
) -> tuple[float | None, float | None]:
    """The 95 % percentile bootstrap interval of κ (seeded: the same input, the same
    interval). κ depends only on the confusion matrix's four counts, so a resample of the
    ``n`` pairs is drawn as those counts — one multinomial draw per round, all rounds at
    once — which is the same distribution as drawing pairs one by one, in O(rounds)."""
    n = len(pairs)
    cells = Counter(f"{h}/{m}" for h, m in pairs)
    order = ("pass/pass", "pass/fail", "fail/pass", "fail/fail")
    shares = np.array([cells[c] / n for c in order], dtype=np.float64)
    counts = np.random.default_rng(_BOOTSTRAP_SEED).multinomial(n, shares, size=rounds)
    observed = (counts[:, 0] + counts[:, 3]) / n
    human_fail = (counts[:, 2] + counts[:, 3]) / n
    metric_fail = (counts[:, 1] + counts[:, 3]) / n
    chance = human_fail * metric_fail + (1 - human_fail) * (1 - metric_fail)
    defined = chance < 1.0
    if int(defined.sum()) < rounds // 2:
        return None, None  # most resamples had no variation: no honest interval
    values = np.sort(np.round((observed[defined] - chance[defined]) / (1 - chance[defined]), 6))
    low, high = values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]
    return float(low), float(high)


def agreement(
    labels: Iterable[HumanLabel],
    report: AuditReport,
    metric: str,
    *,
    rounds: int = 2000,
    duplicates: Duplicates = "collapse",
) -> Agreement:
    """The metric's agreement with ``labels`` on the items the run scored, each labelled
    id counted once (:func:`unique_labels`)."""
    labels, collapsed, conflicts = unique_labels(labels, duplicates)
    outcomes = _outcomes(report, metric)
    pairs: list[tuple[Verdict, Verdict]] = []
    misses: dict[str, list[Miss]] = {"pass": [], "fail": []}
    unscored: Counter[str] = Counter()
    unscored_ids: list[str] = []
    for label in labels:
        outcome, explanation = outcomes.get(label.key, (None, ""))
        if outcome not in (Outcome.PASS, Outcome.FAIL):
            unscored[outcome.value if outcome else "not in the run"] += 1
            unscored_ids.append(label.key)
            continue
        said: Verdict = "pass" if outcome is Outcome.PASS else "fail"
        pairs.append((label.label, said))
        if said != label.label:
            misses[said].append(Miss(id=label.key, session_id=label.session_id,
                                     turn_id=label.turn_id, human=label.label, metric=said,
                                     explanation=explanation))  # fmt: skip
    result = _summary(metric, pairs, rounds)
    result.false_passes, result.false_fails = misses["pass"], misses["fail"]
    result.unscored, result.unscored_ids = dict(unscored), unscored_ids
    result.duplicates_collapsed, result.conflicting_ids = collapsed, conflicts
    return result


def _summary(metric: str, pairs: Sequence[tuple[Verdict, Verdict]], rounds: int) -> Agreement:
    n = len(pairs)
    confusion = {h: {m: 0 for m in ("pass", "fail")} for h in ("pass", "fail")}
    for human, said in pairs:
        confusion[human][said] += 1
    value = kappa(pairs)
    low, high = _interval(pairs, rounds) if value is not None else (None, None)
    undefined = None
    if n == 0:
        undefined = "no labelled item was scored pass or fail by the run"
    elif value is None:
        undefined = "people and the metric each gave one verdict to every item: chance explains all"
    return Agreement(
        metric=metric,
        scored=n,
        kappa=value,
        kappa_low=low,
        kappa_high=high,
        kappa_undefined=undefined,
        observed_agreement=sum(1 for h, m in pairs if h == m) / n if n else None,
        human_fail_rate=sum(1 for h, _ in pairs if h == "fail") / n if n else None,
        metric_fail_rate=sum(1 for _, m in pairs if m == "fail") / n if n else None,
        confusion=confusion,
    )
