"""The embedding backend setting: torch, or the bundled model exported to ONNX (offline).

Real model, real export, real onnxruntime; whether torch is imported is checked in fresh
interpreters, since this test process may already hold it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from aem.compare import CompareSettings, SemanticComparator, TextEmbedder
from aem.compare.onnxmodel import check_layout
from aem.config import load_config

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]

PAIRS = [  # paraphrases and unrelated texts: verdicts both ways at the default threshold
    ("The item must be unused and in its original packaging.",
     "Items have to be unused and in the original packaging."),
    ("The refund was issued", "The refund has been issued"),
    ("The flight is delayed", "The hotel has a pool"),
    ("Please reset my password", "The weather is sunny today"),
    ("Refunds are accepted within 30 days of purchase.",
     "You can get your money back within 30 days after buying."),
]  # fmt: skip


@pytest.fixture(scope="module")
def backends() -> Iterator[dict[str, TextEmbedder]]:
    made = {
        name: TextEmbedder.from_settings(CompareSettings(embedding_backend=name))
        for name in ("torch", "onnx", "onnx-int8")
    }
    yield made
    for embedder in made.values():
        embedder.close()


def test_the_setting_picks_the_backend_and_rejects_unknown_ones() -> None:
    config = load_config(None, ['compare.embedding_backend="onnx-int8"'])
    embedder = TextEmbedder.from_settings(config.compare)
    assert (embedder.backend, embedder.precision) == ("onnx-int8", "onnx-int8")
    default = TextEmbedder.from_settings(CompareSettings())
    assert CompareSettings().embedding_backend == "auto"
    assert (default.backend, default.precision) == ("onnx", "onnx")  # onnxruntime is here
    torch_side = TextEmbedder.from_settings(CompareSettings(embedding_backend="torch"))
    assert torch_side.precision == "fp32"
    with pytest.raises(ValidationError):
        CompareSettings(embedding_backend="tensorflow")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown embedding backend"):
        TextEmbedder(backend="tensorflow")


def test_onnx_gives_torch_s_vectors_and_int8_torch_s_clear_verdicts(
    backends: dict[str, TextEmbedder],
) -> None:
    """onnx is the same network (same similarities); int8 moves them by up to ~0.07, so
    its verdict is held to torch's only where torch is clear of the threshold by more."""
    verdicts: dict[str, list[bool]] = {name: [] for name in backends}
    for a, b in PAIRS:
        base = backends["torch"].similarity(a, b)
        assert abs(backends["onnx"].similarity(a, b) - base) < 1e-4, (a, b)
        assert abs(backends["onnx-int8"].similarity(a, b) - base) < 0.08, (a, b)
        for name, embedder in backends.items():
            verdicts[name].append(SemanticComparator(embedder=embedder).compare(a, b).same)
    assert set(verdicts["torch"]) == {True, False}  # both verdicts are exercised
    assert verdicts["onnx"] == verdicts["torch"]
    threshold = CompareSettings().text_similarity_threshold
    clear = [abs(backends["torch"].similarity(a, b) - threshold) > 0.08 for a, b in PAIRS]
    assert sum(clear) >= 4
    for is_clear, torch_says, int8_says in zip(
        clear, verdicts["torch"], verdicts["onnx-int8"], strict=True
    ):
        assert int8_says == torch_says or not is_clear


def test_each_backend_has_its_own_disk_cache_entries(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    torch_side = TextEmbedder(cache_path=path)
    int8_side = TextEmbedder(backend="onnx-int8", cache_path=path)
    text = "a text both backends embed"
    first = int8_side.encode([text])
    assert int8_side.model_calls == 1
    torch_side.encode([text])  # int8 vectors must not be served as torch ones
    assert torch_side.model_calls == 1
    again = TextEmbedder(backend="onnx-int8", cache_path=path)
    assert (again.encode([text]) == first).all() and again.model_calls == 0
    for embedder in (torch_side, int8_side, again):
        embedder.close()


def test_the_export_happens_once_into_the_cache_directory(tmp_path: Path) -> None:
    first = TextEmbedder(backend="onnx-int8", onnx_dir=tmp_path)
    vector = first.encode(["exported on first use"])
    files = sorted(p.name for p in tmp_path.rglob("*.onnx"))
    assert files == ["model.onnx", "model_int8.onnx"]
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    second = TextEmbedder(backend="onnx-int8", onnx_dir=tmp_path)
    assert (second.encode(["exported on first use"]) == vector).all()
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == stamps  # no re-export


def test_a_model_of_another_layout_is_refused_with_the_reason(tmp_path: Path) -> None:
    kinds = ["Transformer", "Pooling"]  # no Normalize: vectors the export would not match
    modules = [{"path": "", "type": f"sentence_transformers.models.{k}"} for k in kinds]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ValueError, match="transformer\\+mean\\+normalise"):
        check_layout(tmp_path)


_PROBE = """
import sys
sys.argv = ["aem", "audit", *sys.argv[1:], "--workers", "1", "--no-progress"]
from aem.cli import main
try:
    main()
except SystemExit:
    pass
print("\\nLOADED", *sorted(m for m in ("sentence_transformers", "torch", "onnxruntime")
                         if m in sys.modules), file=sys.stderr)
"""


def _loaded(*args: str) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "AEM_WORKERS": "1"},
    )
    line = [x for x in run.stderr.splitlines() if x.startswith("LOADED")]
    assert line, run.stderr[-2000:]
    return set(line[-1].split()[1:])


def test_an_audit_without_text_never_imports_the_model(tmp_path: Path) -> None:
    from bench.session_size.workload import generate, otlp_line

    trace = tmp_path / "no_text.otlp.jsonl"
    trace.write_text(otlp_line(generate(30, session_id="s-1", seed=1)) + "\n")
    no_text = [
        "--set",
        "compare.embed_free_text=false",
        "--set",
        'metrics.disabled=["groundedness", "refusal", "correctness.completeness"]',
    ]
    assert _loaded(str(trace), *no_text) == set()
    # Answers resting on retrieved prose do need the model, and the probe sees it loaded;
    # with text comparison off the same answers do not.
    rag = str(REPO / "sample_traces" / "helpdesk_rag.otlp.jsonl")
    assert _loaded(rag, *no_text) == set()
    assert "sentence_transformers" in _loaded(rag, "--set", 'compare.embedding_backend="torch"')


def test_an_audit_on_the_onnx_backend_never_imports_torch(tmp_path: Path) -> None:
    TextEmbedder(backend="onnx").encode(["export before the audit, if not cached yet"])
    sample = str(REPO / "sample_traces" / "weather_genai.otlp.jsonl")
    loaded = _loaded(sample, "--set", 'compare.embedding_backend="onnx"')
    assert loaded == {"onnxruntime"}


def test_a_default_audit_of_one_rag_session_never_imports_torch(tmp_path: Path) -> None:
    """With a warm cache, the default backend tokenises and encodes without torch: the
    session's answers are embedded (onnxruntime loaded), torch never imported."""
    TextEmbedder().encode(["export before the audit, if not cached yet"])
    lines = (REPO / "sample_traces" / "helpdesk_rag.otlp.jsonl").read_text().splitlines()
    trace = tmp_path / "one_session.otlp.jsonl"
    trace.write_text("\n".join(lines[:3]) + "\n")  # the sample's first session, alone
    assert _loaded(str(trace)) == {"onnxruntime"}


def test_workers_preload_torch_only_when_torch_will_run() -> None:
    """The forkserver imports sentence-transformers (seconds of CPU) only for the torch
    backend; the default resolves to onnx here, so workers start without it."""
    from aem.engines.pool import preloads_embedding
    from aem.settings import AemConfig

    assert not preloads_embedding(AemConfig())
    assert preloads_embedding(load_config(None, ['compare.embedding_backend="torch"']))
    assert not preloads_embedding(
        load_config(None, ['compare.embedding_backend="torch"', "compare.embed_free_text=false"])
    )


def test_an_onnx_vector_does_not_depend_on_the_texts_beside_it(
    backends: dict[str, TextEmbedder],
) -> None:
    """Batches are cut by length as well as size (less padding); a heading encoded among
    long passages still gets the vector it gets alone."""
    onnx = backends["onnx"]
    heading = "HONG KONG"
    long = " ".join(["Refunds are accepted within 30 days of purchase with a receipt."] * 6)
    mixed = [long, heading, *(f"{long} ({n})" for n in range(40)), "Returns are free."]
    together = onnx.encode_uncached(mixed)
    alone = onnx.encode_uncached([heading, "Returns are free."])
    assert np.abs(together[[1, -1]] - alone).max() < 1e-6
