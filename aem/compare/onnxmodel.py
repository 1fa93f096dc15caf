"""The sentence-transformers model run by onnxruntime: no torch at run time.

Why: importing torch and transformers costs seconds in every process that compares text,
and onnxruntime runs the same network without them (``bench/embeddings`` measures the
speed and the agreement of verdicts with torch). The ONNX file is exported from the
model's own weights, offline, the first time it is needed, and kept in a per-user cache
directory: later processes only load it. The export needs torch (installed with
sentence-transformers); running the exported model needs only onnxruntime, tokenizers and
numpy. ``int8`` is the exported graph with its weights quantised per channel
(``onnxruntime.quantization.quantize_dynamic``): about twice as fast, slightly different
vectors.

Only the sentence-transformers layout of the bundled model is supported: a BERT-like
transformer, mean pooling, normalisation (``modules.json``); any other model is refused
with the reason, so it runs on the torch backend instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

_FORMAT = "1"  # bump when the export below changes: old cache entries are then ignored


def default_cache_dir() -> Path:
    """Where exported models live: the per-user cache (``~/.cache/aem/onnx`` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("aem")) / "onnx"


def resolve_model_dir(model: str) -> Path:
    """A local directory holding the sentence-transformers model, found offline."""
    path = Path(model)
    if path.is_dir():
        return path
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model, local_files_only=True))
    except Exception as exc:
        raise ValueError(
            f"embedding model {model!r} is not a local directory nor in the Hugging Face "
            f"cache; the onnx backend never downloads ({exc})"
        ) from exc


def check_layout(model_dir: Path) -> int:
    """The model's maximum sequence length, once its layout is the one exported here."""
    modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        raise ValueError(f"onnx backend: model layout {kinds} is not transformer+mean+normalise")
    pooling_dir = model_dir / next(m["path"] for m in modules if m["type"].endswith("Pooling"))
    pooling = json.loads((pooling_dir / "config.json").read_text(encoding="utf-8"))
    if not pooling.get("pooling_mode_mean_tokens") or any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k.endswith("_token")
    ):
        raise ValueError(f"onnx backend: pooling {pooling} is not mean pooling")
    config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config.get("max_seq_length") or 512)


def _model_key(model_dir: Path) -> str:
    """Identity of the weights: path, size and modification time of each weight file."""
    parts = [_FORMAT, str(model_dir.resolve())]
    for f in sorted(model_dir.glob("*.safetensors")) + sorted(model_dir.glob("*.bin")):
        stat = f.stat()
        parts.append(f"{f.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _atomic(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target``, renamed onto it when the block succeeds, so a
    concurrent process never loads a half-written file (two exports just race to rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    os.close(fd)
    os.chmod(name, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
    try:
        yield Path(name)
        os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.unlink(name)


def _export_fp32(model_dir: Path, target: Path) -> None:
    """torch.onnx.export of the transformer (its last hidden state), dynamic batch/length."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    network = AutoModel.from_pretrained(str(model_dir)).eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.network(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}
    with _atomic(target) as tmp, warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHidden(),
            (ids, ids, torch.zeros_like(ids)),
            str(tmp),
            dynamo=False,
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
        )


def _quantise(source: Path, target: Path) -> None:
    """int8 weights, per output channel (half the cosine error of one scale per tensor)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    was = root.disabled
    root.disabled = True  # it logs a pre-processing suggestion on the root logger
    try:
        with _atomic(target) as tmp:
            quantize_dynamic(str(source), str(tmp), per_channel=True, weight_type=QuantType.QInt8)
    finally:
        root.disabled = was


def exported_model(model_dir: Path, *, int8: bool, cache_dir: Path | None = None) -> Path:
    """The ONNX file for ``model_dir``, exported (and quantised) now if not cached yet."""
    folder = (cache_dir or default_cache_dir()) / _model_key(model_dir)
    fp32 = folder / "model.onnx"
    if not fp32.exists():
        _export_fp32(model_dir, fp32)
    if not int8:
        return fp32
    quantised = folder / "model_int8.onnx"
    if not quantised.exists():
        _quantise(fp32, quantised)
    return quantised


def is_exported(model: str, *, int8: bool, cache_dir: Path | None = None) -> bool:
    """Whether ``model``'s ONNX file is cached already (loading it then takes under a
    second; exporting it first takes torch and tens of seconds). Nothing is exported."""
    try:
        folder = (cache_dir or default_cache_dir()) / _model_key(resolve_model_dir(model))
    except (ValueError, OSError):
        return False
    return (folder / ("model_int8.onnx" if int8 else "model.onnx")).is_file()


def _session(path: Path, threads: int | None, hidden_size: int) -> Any:
    """An inference session on ``path``, once the file proves to be this model's export:
    it loads, takes ``input_ids`` and ``attention_mask``, and maps two tokens to two
    ``hidden_size`` vectors. A truncated file, or one another export left there, fails
    here (``ValueError`` or onnxruntime's own error) instead of giving wrong vectors."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Idle threads sleep instead of spinning: on a shared or busy machine a spinning pool
    # burns CPU the other processes need (2 threads: -20 % CPU time measured, same wall).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= inputs:
        raise ValueError(f"{path} takes {sorted(inputs)}, not input_ids and attention_mask")
    probe = np.array([[101, 102]], dtype=np.int64)
    feed = {"input_ids": probe, "attention_mask": np.ones_like(probe)}
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = np.zeros_like(probe)
    hidden = np.asarray(session.run(None, feed)[0])
    if hidden.shape != (1, 2, hidden_size) or not np.isfinite(hidden).all():
        raise ValueError(
            f"{path} gives hidden states of shape {hidden.shape}, not (1, 2, {hidden_size})"
        )
    return session


def load_session(
    model_dir: Path, *, int8: bool, threads: int | None = None, cache_dir: Path | None = None
) -> tuple[Path, Any]:
    """The checked session on the cached export, exported first when missing. A cached
    file that fails the check (corrupt, stale) is removed and exported once more; what
    still fails raises, and the caller falls back to torch."""
    hidden_size = int(
        json.loads((model_dir / "config.json").read_text(encoding="utf-8"))["hidden_size"]
    )
    path = exported_model(model_dir, int8=int8, cache_dir=cache_dir)
    try:
        return path, _session(path, threads, hidden_size)
    except Exception:  # onnxruntime raises its own classes for unreadable graphs
        path.unlink(missing_ok=True)
        if int8:  # a bad int8 file may come from a bad fp32 one: check that one too
            fp32 = path.with_name("model.onnx")
            try:
                _session(fp32, threads, hidden_size)
            except Exception:
                fp32.unlink(missing_ok=True)
    path = exported_model(model_dir, int8=int8, cache_dir=cache_dir)
    return path, _session(path, threads, hidden_size)


class OnnxEncoder:
    """Tokenise, run the ONNX transformer, mean-pool over real tokens, normalise."""

    def __init__(
        self,
        model: str,
        *,
        int8: bool,
        threads: int | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        model_dir = resolve_model_dir(model)
        max_tokens = check_layout(model_dir)
        self.path, self.session = load_session(
            model_dir, int8=int8, threads=threads, cache_dir=cache_dir
        )
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        self._inputs = {i.name for i in self.session.get_inputs()}

    def _batch(self, encodings: Sequence[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors, one row per text; batches of similar length (little padding)."""
        encodings = self.tokenizer.encode_batch([str(t).strip() for t in texts])
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for rows in _length_batches([len(e.ids) for e in encodings], batch_size):
            vectors = self._batch([encodings[i] for i in rows])
            if out.shape[1] == 0:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out


# A batch ends where the next text is shorter than this share of the batch's longest.
_PADDING_SLACK = 0.75


def _length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Row indices, longest first, cut into batches of at most ``batch_size`` whose texts
    are within ``_PADDING_SLACK`` of the batch's longest.

    Why: a batch runs at its longest text's width, and the texts groundedness sends in
    one call range from a heading of 3 tokens to two sentences after the question;
    counted by size alone, most of a batch was padding. Cut by length too, the 55 texts of
    a RAG answer took 1.8x less CPU, with bit-identical vectors (padding is masked)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        last = batches[-1] if batches else []
        if last and len(last) < batch_size and lengths[i] >= _PADDING_SLACK * lengths[last[0]]:
            last.append(i)
        else:
            batches.append([i])
    return batches
