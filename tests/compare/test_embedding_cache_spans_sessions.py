"""The embedding cache is the run's, not the session's, and it is bounded.

Why these tests: encoding is most of what ``groundedness`` costs, and answers about one
document share its sentences; an evaluator that made its cache per session would pay the
model for every passage again on every answer (151 texts per RAGTruth answer instead of
47) without any verdict changing, so only a count of what reached the model can catch it.
The real bundled model runs; the counting embedder only records what it is sent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pytest

from aem.compare import CompareSettings, SemanticComparator, TextEmbedder
from aem.config import load_config
from aem.evaluate import Evaluator
from aem.foundation.model import Outcome, Session, SessionReport, TurnKind
from aem.metrics.registry import resolve_metrics
from aem.testing import make_session, make_turn

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytestmark = pytest.mark.slow

ARTICLE = [
    "The museum opens at 9:00 on weekdays.",
    "It was renovated in 2015 after a long closure.",
    "An adult ticket costs 12 euros.",
    "Guided tours run every Saturday morning.",
]


class CountingEmbedder(TextEmbedder):
    """The real embedder, remembering every text the model itself was asked to encode."""

    def __init__(self, settings: CompareSettings) -> None:
        super().__init__(
            settings.embedding_model,
            cache_size=settings.embedding_cache_size,
            threads=1,
            backend=settings.embedding_backend,
        )
        self.sent: list[str] = []

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        self.sent.extend(texts)
        return super().encode_uncached(texts)


def _answer(session_id: str, answer: str) -> Session:
    """One RAG answer about :data:`ARTICLE` (the document every answer shares)."""
    return make_session(
        make_turn(TurnKind.RETRIEVAL, "retrieval kb", documents=[" ".join(ARTICLE)]),
        make_turn(TurnKind.ANSWER, "answer", text=answer),
        session_id=session_id,
        user_inputs=["What should a visitor know?"],
    )


def _groundedness_evaluator(embedder: TextEmbedder | None = None) -> Evaluator:
    config = load_config(None, ["metrics.groundedness.require_citation=never"])
    metrics = [m for m in resolve_metrics(config) if m.name == "groundedness"]
    if embedder is None:
        return Evaluator(config, metrics=metrics)
    comparator = SemanticComparator(config.compare, embedder=embedder)
    return Evaluator(config, metrics=metrics, comparator=lambda: comparator)


def _groundedness(report: SessionReport) -> list[Outcome]:
    return [m.outcome for t in report.turns for m in t.metrics if m.name == "groundedness"]


def test_two_answers_sharing_a_document_encode_its_sentences_once_per_run() -> None:
    settings = CompareSettings()
    embedder = CountingEmbedder(settings)
    evaluator = _groundedness_evaluator(embedder)
    first = evaluator.evaluate(_answer("a1", "The museum opens at 9:00 on weekdays."))
    after_first = list(embedder.sent)
    second = evaluator.evaluate(_answer("a2", "An adult ticket costs 12 euros."))
    assert _groundedness(first) == [Outcome.PASS] and _groundedness(second) == [Outcome.PASS]
    shared = [s for s in ARTICLE if s in after_first]
    assert shared, "the first answer should have embedded the article's sentences"
    second_sent = embedder.sent[len(after_first) :]
    assert not set(second_sent) & set(shared), "the shared sentences were encoded twice"
    assert len(embedder.sent) == len(set(embedder.sent)), "some text reached the model twice"


def test_an_evaluator_keeps_one_embedder_for_all_its_sessions() -> None:
    evaluator = _groundedness_evaluator()
    evaluator.evaluate(_answer("a1", "The museum opens at 9:00 on weekdays."))
    embedder = evaluator.comparator().embedder
    encoded, hits = embedder.texts_encoded, embedder.cache_hits
    evaluator.evaluate(_answer("a2", "The museum opens at 9:00 on weekdays."))
    assert evaluator.comparator().embedder is embedder
    assert embedder.texts_encoded == encoded, "the same answer again should cost no encoding"
    assert embedder.cache_hits > hits


def test_the_cache_is_an_lru_of_the_configured_size() -> None:
    embedder = CountingEmbedder(CompareSettings(embedding_cache_size=2))
    embedder.encode(["alpha", "beta"])
    embedder.encode(["alpha"])  # a hit: alpha is now the most recently used
    embedder.encode(["gamma"])  # over the bound: beta, the least recently used, goes
    embedder.encode(["alpha", "beta", "gamma"])
    assert embedder.sent == ["alpha", "beta", "gamma", "beta"]


def test_a_cache_of_size_zero_keeps_nothing() -> None:
    embedder = CountingEmbedder(CompareSettings(embedding_cache_size=0))
    first = embedder.encode(["alpha"])
    again = embedder.encode(["alpha"])
    assert embedder.sent == ["alpha", "alpha"]
    np.testing.assert_allclose(first, again, atol=1e-6)


def test_the_default_bound_is_the_documented_one() -> None:
    settings = CompareSettings()
    assert settings.embedding_cache_size == 50_000
    assert TextEmbedder.from_settings(settings).cache_size == 50_000


def _rag(answer: str, document: str, question: str) -> Session:
    return make_session(
        make_turn(TurnKind.RETRIEVAL, "retrieval kb", documents=[document]),
        make_turn(TurnKind.ANSWER, "answer", text=answer),
        session_id="s",
        user_inputs=[question],
    )


def _groundedness_results(report: SessionReport) -> list[str]:
    return [m.explanation for t in report.turns for m in t.metrics if m.name == "groundedness"]


def test_a_claim_its_value_decides_sends_nothing_to_the_model() -> None:
    """Only what can change a verdict is encoded: an answer whose one claim states a
    price no passage holds is proven wrong by its value, whatever passage is nearest."""
    embedder = CountingEmbedder(CompareSettings())
    evaluator = _groundedness_evaluator(embedder)
    report = evaluator.evaluate(
        _rag("An adult ticket costs $19.50.", " ".join(ARTICLE), "What does a ticket cost?")
    )
    assert _groundedness(report) == [Outcome.FAIL]
    assert "states '$19.50', which the context does not hold" in _groundedness_results(report)[0]
    assert embedder.sent == []


def test_sentences_sharing_no_word_with_a_claim_are_not_encoded() -> None:
    """A sentence with no content word, number or name of any open claim, a pair of
    neighbours that no one claim bears on both halves of, and the question before a
    sentence that already paraphrases the claim are left out; the verdict stands."""
    embedder = CountingEmbedder(CompareSettings())
    evaluator = _groundedness_evaluator(embedder)
    question = "What should a visitor know?"
    report = evaluator.evaluate(
        _rag("Guided tours run every Saturday morning.", " ".join(ARTICLE), question)
    )
    assert _groundedness(report) == [Outcome.PASS]
    assert "Guided tours run every Saturday morning." in embedder.sent
    assert not any("renovated" in text or "ticket" in text for text in embedder.sent)
    assert not any(text.startswith(question) for text in embedder.sent)


def test_a_passage_left_unencoded_still_counts_by_the_words_it_shares() -> None:
    """ "You can return an item within 30 days" rests on "Refunds are accepted within 30
    days" read after the question "How long do I have to return an item?": that passage
    shares every content word of the claim, which decides it without its vector."""
    embedder = CountingEmbedder(CompareSettings())
    evaluator = _groundedness_evaluator(embedder)
    question = "How long do I have to return an item?"
    document = "Refunds are accepted within 30 days of purchase. Shipping costs are not refunded."
    report = evaluator.evaluate(_rag("You can return an item within 30 days.", document, question))
    assert _groundedness(report) == [Outcome.PASS]
    assert "from document [1] and the question" in _groundedness_results(report)[0]
    assert "Shipping costs are not refunded." not in embedder.sent
