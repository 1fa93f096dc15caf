"""Free text through the real bundled model (offline): similarity, batching, caching."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from aem.compare import CompareSettings, SemanticComparator, TextEmbedder
from aem.compare.calibrate import LabelledPair, calibrate, render_calibration

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Iterator[TextEmbedder]:
    """One model load for the whole module (the load is the dear part)."""
    e = TextEmbedder()
    yield e
    e.close()


@pytest.fixture
def comparator(embedder: TextEmbedder) -> SemanticComparator:
    return SemanticComparator(CompareSettings(text_similarity_threshold=0.6), embedder=embedder)


def test_paraphrases_match_and_unrelated_texts_do_not(comparator: SemanticComparator) -> None:
    same = comparator.compare("The refund was issued", "We sent the money back")
    different = comparator.compare("The flight is delayed", "The hotel has a pool")
    assert same.kind == different.kind == "text"
    assert same.same, same.reason
    assert not different.same, different.reason
    assert same.threshold == 0.6 and "cosine" in same.reason
    assert same.score > different.score


def test_embeddings_are_unit_length_and_in_input_order(embedder: TextEmbedder) -> None:
    vectors = embedder.encode(["alpha beta", "gamma delta", "alpha beta"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert np.array_equal(vectors[0], vectors[2])
    assert not np.allclose(vectors[0], vectors[1])


def test_repeated_texts_cost_no_model_call(embedder: TextEmbedder) -> None:
    texts = [f"a fresh sentence number {k}" for k in range(10)]
    calls, encoded = embedder.model_calls, embedder.texts_encoded
    embedder.encode(texts + texts)
    assert embedder.model_calls == calls + 1
    assert embedder.texts_encoded == encoded + 10
    embedder.encode(list(reversed(texts)))
    assert embedder.model_calls == calls + 1


def test_compare_many_encodes_all_texts_in_one_call(comparator: SemanticComparator) -> None:
    embedder = comparator.embedder
    pairs = [
        (f"the parcel {k} left the warehouse", f"shipment {k} has been dispatched")
        for k in range(8)
    ]
    pairs += [("1 234,50", 1234.5), ({"note": "gate changed to B7"}, {"note": "new gate is B7"})]
    calls = embedder.model_calls
    results = comparator.compare_many(pairs)
    assert embedder.model_calls == calls + 1
    assert len(results) == len(pairs)
    assert results[8].kind == "number" and results[8].same
    assert results[9].kind == "json"
    assert all(r.kind == "text" for r in results[:8])
    # same verdicts as one by one
    assert [r.same for r in results] == [comparator.compare(a, b).same for a, b in pairs]
    assert embedder.model_calls == calls + 1


def test_best_match_picks_the_closest_meaning(comparator: SemanticComparator) -> None:
    index, score = comparator.best_match(
        "my luggage did not arrive",
        ["the weather is nice", "baggage lost on the flight", "seat upgrade request"],
    )
    assert index == 1 and 0 < score <= 1.0
    assert comparator.best_match("anything", []) == (-1, 0.0)


def test_disk_cache_serves_a_new_process_without_the_model(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    first = TextEmbedder(cache_path=path)
    vector = first.encode(["cached across runs"])
    first.close()
    second = TextEmbedder(cache_path=path)
    again = second.encode(["cached across runs"])
    assert not second.loaded and second.model_calls == 0 and second.cache_hits == 1
    assert np.allclose(vector, again)
    second.close()


def test_bf16_and_fp32_agree_closely(embedder: TextEmbedder) -> None:
    bf16 = TextEmbedder(bf16=True)
    a, b = "the invoice total is wrong", "the bill amount is incorrect"
    assert abs(bf16.similarity(a, b) - embedder.similarity(a, b)) < 0.02


def test_calibration_reports_both_error_rates(comparator: SemanticComparator) -> None:
    pairs = [
        LabelledPair("The refund was issued", "We sent the money back", True),
        LabelledPair("The flight is delayed", "Your flight departs late", True),
        LabelledPair("The flight is delayed", "The hotel has a pool", False),
        LabelledPair("Please reset my password", "The weather is sunny today", False),
        LabelledPair("1 234,50", 1234.5, True),
        LabelledPair("ORD-42", "ORD-43", True),  # a wrong label the threshold cannot fix
    ]
    result = calibrate(pairs, comparator)
    assert result.text_pairs == 4 and result.fixed_pairs == 2
    assert len(result.fixed_errors) == 1
    assert result.best is not None
    assert result.best.false_match_rate == 0.0 and result.best.false_mismatch_rate == 0.0
    rates = [(r.false_match_rate, r.false_mismatch_rate) for r in result.rows]
    assert rates[0] == (1.0, 0.0) and rates[-1] == (0.0, 1.0)  # the two extremes
    console = Console(record=True, width=120)
    render_calibration(result, console)
    text = console.export_text()
    assert "balanced (picked)" in text and "ORD-42" in text
