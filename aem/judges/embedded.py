"""The embedded judge: offline, no API key, built on AEM's own comparison.

Why it exists: a fresh machine with no model endpoint must still run a test. Why it skips
so often: it has sentence embeddings, value extraction and value support, not reading
comprehension, so it scores only what those can decide — an answer that says what the
reference says, states the reference's values, contradicts them, or honestly declines —
and says ``skip`` with the reason for everything else (no reference, an instruction to
follow, text claims only a reader can check). Its scores are band midpoints of the
rubric (9, 5, 2, 10 for an honest "I don't know"), and every explanation names the
evidence, so nobody mistakes it for a model's reading.
"""

from __future__ import annotations

from collections.abc import Callable

from aem.compare.core import SemanticComparator
from aem.compare.extract import StatedValue, extract_values
from aem.evidence import SeenValues
from aem.foundation.vocabulary import DECLINE_CUES
from aem.judges.base import JudgeRequest, JudgeVerdict
from aem.judges.kinds import JudgeServices
from aem.judges.settings import EMBEDDED, EmbeddedJudgeSettings

_FULL, _PARTIAL, _LOW, _HONEST = 9.0, 5.0, 2.0, 10.0


class EmbeddedJudge:
    """Scores by similarity to the reference and by the reference's values.

    It scores the checks whose ``embedded_scoring`` names one of its scorings
    (``relevance``, ``faithfulness``, ``task_completion``) and skips any other.
    """

    name = EMBEDDED
    kind = EMBEDDED
    Settings = EmbeddedJudgeSettings

    def __init__(
        self,
        comparator: SemanticComparator | Callable[[], SemanticComparator],
        settings: EmbeddedJudgeSettings | None = None,
    ) -> None:
        self._comparator = comparator
        self.settings = settings or EmbeddedJudgeSettings()
        self._scorings = {
            "relevance": self._relevance,
            "faithfulness": self._faithfulness,
            "task_completion": self._task_completion,
        }

    @classmethod
    def from_settings(
        cls, settings: EmbeddedJudgeSettings, services: JudgeServices
    ) -> EmbeddedJudge:
        """Whatever the table's name, its verdicts say ``embedded``: it is one judge."""
        return cls(services.comparator, settings)

    @property
    def comparator(self) -> SemanticComparator:
        found = self._comparator
        return found if isinstance(found, SemanticComparator) else found()

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        if request.step is not None:
            return JudgeVerdict.skip(self.name, "the embedded judge cannot judge reasoning steps")
        if not request.reference_answer:
            why = (
                "a judge instruction needs an LLM judge"
                if request.judge_instruction and request.embedded_scoring == "task_completion"
                else "without a reference answer only an LLM judge can score this"
            )
            return JudgeVerdict.skip(self.name, why)
        method = self._scorings.get(request.embedded_scoring or "")
        if method is None:
            return JudgeVerdict.skip(self.name, f"no method for {request.check}")
        return method(request, request.reference_answer)

    def _scored(self, score: float, why: str) -> JudgeVerdict:
        return JudgeVerdict(self.name, "scored", why, score=score)

    def _similarity(self, answer: str, reference: str) -> float:
        return float(self.comparator.similarity(answer, reference))

    def _relevance(self, request: JudgeRequest, reference: str) -> JudgeVerdict:
        cosine = self._similarity(request.answer, reference)
        if cosine >= self.settings.close_similarity:
            return self._scored(
                _FULL,
                f"the answer is about what the question wants (cosine "
                f"{cosine:.2f} to the reference)",
            )
        if cosine <= self.settings.unrelated_similarity:
            return self._scored(
                _LOW, f"the answer is about something else (cosine {cosine:.2f} to the reference)"
            )
        return JudgeVerdict.skip(
            self.name,
            f"cosine {cosine:.2f} to the reference is between the "
            "bands; only an LLM judge can tell",
        )

    def _values(self, text: str) -> list[StatedValue]:
        return extract_values(text, self.comparator.settings)

    def _faithfulness(self, request: JudgeRequest, reference: str) -> JudgeVerdict:
        if DECLINE_CUES.search(request.answer):
            return self._scored(_HONEST, "the agent honestly says it does not know")
        settings = self.comparator.settings
        seen = SeenValues.gather([reference, request.question], settings)
        stated = self._values(request.answer)
        kinds = {v.kind for v in self._values(reference)}
        against = [v for v in stated if v.kind in kinds and not seen.supports(v, settings)]
        if against:
            listed = ", ".join(repr(v.raw) for v in against[:3])
            return self._scored(
                _LOW, f"the answer states {listed}, which the reference contradicts"
            )
        cosine = self._similarity(request.answer, reference)
        if stated and cosine >= self.settings.close_similarity:
            return self._scored(
                _FULL,
                f"every stated value agrees with the reference and the "
                f"answer says what it says (cosine {cosine:.2f})",
            )
        return JudgeVerdict.skip(
            self.name, "no value contradicts the reference, but claims in text need an LLM judge"
        )

    def _task_completion(self, request: JudgeRequest, reference: str) -> JudgeVerdict:
        settings = self.comparator.settings
        wanted = self._values(reference)
        if wanted:
            said = SeenValues.gather([request.answer], settings)
            found = [v for v in wanted if said.states(v, settings)]
            missing = [v.raw for v in wanted if v not in found]
            if not missing:
                return self._scored(_FULL, "the answer states every value of the reference")
            listed = ", ".join(repr(m) for m in missing[:3])
            if found:
                return self._scored(_PARTIAL, f"the answer misses {listed} of the reference")
            return self._scored(
                _LOW, f"the answer states none of the reference's values ({listed})"
            )
        cosine = self._similarity(request.answer, reference)
        if cosine >= self.settings.close_similarity:
            return self._scored(
                _FULL, f"the answer says what the reference says (cosine {cosine:.2f})"
            )
        if cosine <= self.settings.unrelated_similarity:
            return self._scored(
                _LOW, f"the answer does not reach the reference's result (cosine {cosine:.2f})"
            )
        return JudgeVerdict.skip(
            self.name,
            f"cosine {cosine:.2f} to the reference is between the "
            "bands; only an LLM judge can tell",
        )
