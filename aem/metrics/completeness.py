"""``correctness.completeness``: the case's ``key_points`` covered by the final answer.

Coverage is judged per key point against the answer's sentences, two ways, either
enough: every content word of the point appears in the answer (``2+3=5``,
``customer C-1042``), or embedding similarity reaches the threshold. Before embedding,
stated values (numbers, dates, ids) are masked to their kind on both sides, because
completeness asks whether the *part* of the task was answered; whether its values are
right is truthfulness's question. (An answer about March 2025 covers "refund total for
March 2026"; truthfulness fails it for the year.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import Field

from aem.compare.extract import extract_values
from aem.compare.settings import CompareSettings
from aem.evidence import SeenValues
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.foundation.vocabulary import FUNCTION_WORDS_EN, language_of
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result

NAME = "correctness.completeness"
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)


_KIND_TOKENS = frozenset({"number", "date", "period", "id", "time", "day"})


def _mask_values(text: str, settings: object) -> str:
    """Replace stated values with their kind: ``March 2026`` → ``<period>``."""
    out, last = [], 0
    for value in extract_values(text, settings):  # type: ignore[arg-type]
        out.append(text[last : value.start])
        out.append(f"<{value.kind}>")
        last = value.end
    out.append(text[last:])
    return "".join(out)


def _content_words(text: str) -> set[str]:
    words = {w.lower() for w in _WORD.findall(text)}
    return {w for w in words if w and w not in FUNCTION_WORDS_EN}


def _lexically_covered(point: str, answer: str, settings: CompareSettings) -> bool:
    """Every value of the point is stated in the answer (``23553`` by ``$23,553``), and
    every other content word of the point appears in it."""
    values = extract_values(point, settings)
    stated = SeenValues.gather([answer], settings)
    if not all(stated.states(value, settings) for value in values):
        return False
    wanted = _content_words(_mask_values(point, settings)) - _KIND_TOKENS
    if not wanted:
        return bool(values)
    return wanted <= _content_words(answer)


def _other_language(point: str, answer_language: str | None) -> bool:
    """Whether the answer is written in another read language than the key point."""
    point_language = language_of(point) or "en"
    return answer_language is not None and answer_language != point_language


def _values_covered(point: str, answer: str, settings: CompareSettings) -> bool:
    """Every value of the point is stated in the answer, and the point has one at least."""
    values = extract_values(point, settings)
    stated = SeenValues.gather([answer], settings)
    return bool(values) and all(stated.states(value, settings) for value in values)


class CompletenessSettings(MetricSettings):
    key_point_threshold: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="cosine similarity at or above which an answer sentence covers a key point",
    )


class Completeness(BaseMetric[CompletenessSettings]):
    name = NAME
    evaluator_type = "embedding"
    band = "completeness"
    Settings = CompletenessSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        answers = context.answers
        if not answers:
            return
        final = answers[-1]
        if context.case is None:
            yield result(NAME, final, Outcome.SKIP, "no case for this session (--cases)")
            return
        key_points = context.case.key_points
        if not key_points:
            yield result(NAME, final, Outcome.SKIP, "the case has no key_points")
            return
        threshold = self.settings.key_point_threshold
        # In a dialogue the task is answered over several messages: coverage is judged on
        # everything the agent told the user; the verdict lands on the final answer.
        said = "\n".join(t.text or "" for t in answers)
        sentences = [s.strip() for s in _SENTENCE.split(said) if s.strip()]
        if not sentences:
            yield _empty(final, said, len(key_points), threshold)
            return
        covered, missing, unchecked = _coverage(context, key_points, said, sentences, threshold)
        if len(unchecked) == len(key_points):
            yield result(
                NAME,
                final,
                Outcome.SKIP,
                f"not checked: the {len(unchecked)} key point(s) hold no value and are in "
                "another language than the answer",
            )
            return
        note = f"; {len(unchecked)} not checked (another language)" if unchecked else ""
        score = len(covered) / (len(key_points) - len(unchecked))
        if missing:
            listed = "; ".join(f"{p!r} (best {s:.2f})" for p, _, s in missing)
            yield result(
                NAME,
                final,
                Outcome.FAIL,
                f"{len(missing)} of {len(key_points)} key points not covered: {listed}{note}",
                score=score,
                threshold=threshold,
                evidence=[
                    Evidence(
                        span_id=final.span_ids[0],
                        expected=p,
                        actual=sentences[i],
                        detail=f"cosine {s:.2f}",
                    )
                    for p, i, s in missing
                ],
            )
        else:
            yield result(
                NAME,
                final,
                Outcome.PASS,
                f"all {len(covered)} key points covered (cosine ≥ {threshold}){note}",
                score=score,
                threshold=threshold,
            )


Coverage = list[tuple[str, int, float]]  # (key point, best sentence index, similarity)


def _empty(final: Turn, said: str, points: int, threshold: float) -> MetricResult:
    """The fail of an answer that says nothing: the empty text is the proof."""
    return result(
        NAME,
        final,
        Outcome.FAIL,
        "the answer is empty",
        score=0.0,
        threshold=threshold,
        evidence=[
            Evidence(
                span_id=final.span_ids[0],
                field="text",
                expected=f"an answer covering {points} key point(s)",
                actual=said,
                detail="the agent told the user nothing",
            )
        ],
    )


def _coverage(
    context: MetricContext, key_points: list[str], said: str, sentences: list[str], threshold: float
) -> tuple[Coverage, Coverage, list[str]]:
    """Key points covered and missed: by words and values first, else by embedding."""
    covered: Coverage = []
    missing: Coverage = []
    unchecked: list[str] = []
    settings = context.services.compare
    masked = [_mask_values(s, settings) for s in sentences]
    answer_language = language_of(said)
    for point in key_points:
        if _lexically_covered(point, said, settings):
            covered.append((point, 0, 1.0))
            continue
        if _other_language(point, answer_language):
            # Values are compared in any language; words of another language are not:
            # the point is covered by its values, missed by one the answer lacks, and
            # not checked when it has none.
            values = extract_values(point, settings)
            if not values:
                unchecked.append(point)
                continue
            found = _values_covered(point, said, settings)
            (covered if found else missing).append((point, 0, 1.0 if found else 0.0))
            continue
        index, similarity = context.comparator.best_match(_mask_values(point, settings), masked)
        (covered if similarity >= threshold else missing).append((point, index, similarity))
    return covered, missing, unchecked
