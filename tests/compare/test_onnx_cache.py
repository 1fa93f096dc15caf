"""The default backend's ONNX cache in every state it can be found in.

``auto`` runs the model on onnxruntime from a file exported into a per-user cache, so that
file's state is the default path's weak point: missing (first run), corrupt (a truncated
copy), stale (another export left there), unwritable, and two processes exporting into it
at once. Each must end with usable vectors — the ONNX ones, or torch's with one warning —
never a crash, never a half-written file. Real export, real onnxruntime, real processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from aem.compare import TextEmbedder
from aem.compare.embedder import OnnxFallbackWarning

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytestmark = pytest.mark.slow
TEXTS = ["The refund was issued to the card.", "Items must be unused."]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    """What the reference backend gives for ``TEXTS``."""
    return TextEmbedder(backend="torch").encode(TEXTS)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache directory the default backend exported into (a fresh cache)."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxFallbackWarning)
        embedder = TextEmbedder(onnx_dir=folder)
        embedder.encode(TEXTS)
    assert embedder.backend == "onnx"
    yield folder


def _no_fallback(folder: Path) -> TextEmbedder:
    """An embedder on ``folder``, loaded; a fallback warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", OnnxFallbackWarning)
        embedder = TextEmbedder(onnx_dir=folder)
        embedder.encode(["load it now"])
    return embedder


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_a_fresh_cache_is_exported_once_and_gives_torch_s_vectors(
    exported: Path, torch_vectors: np.ndarray
) -> None:
    assert _files(exported) == ["model.onnx"]  # no temporary file left behind
    embedder = _no_fallback(exported)
    assert (embedder.backend, embedder.precision) == ("onnx", "onnx")
    assert np.abs(embedder.encode(TEXTS) - torch_vectors).max() < 1e-4


def _model_file(folder: Path) -> Path:
    (path,) = folder.rglob("model.onnx")
    return path


def _copy_cache(source: Path, target: Path) -> Path:
    """``source``'s cached export copied under ``target``; the copied file's path."""
    original = _model_file(source)
    copy = target / original.parent.name / original.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(original.read_bytes())
    return copy


def _a_graph_of_another_model() -> bytes:
    """A valid ONNX file that is not this model's export (one Identity on ``x``)."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 384])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 384])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "other", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(model.SerializeToString())


@pytest.mark.parametrize("damage", ["corrupt", "stale"])
def test_a_corrupt_or_stale_file_is_exported_again(
    damage: str, exported: Path, tmp_path: Path, torch_vectors: np.ndarray
) -> None:
    """Truncated (a copy cut short) or another export's graph: refused at load, replaced
    by a fresh export, and the vectors are this model's."""
    path = _copy_cache(exported, tmp_path)
    good_size = path.stat().st_size
    if damage == "corrupt":
        path.write_bytes(path.read_bytes()[: good_size // 2])
    else:
        path.write_bytes(_a_graph_of_another_model())
    embedder = _no_fallback(tmp_path)
    assert embedder.backend == "onnx"
    assert path.stat().st_size == good_size
    assert _files(tmp_path) == ["model.onnx"]
    assert np.abs(embedder.encode(TEXTS) - torch_vectors).max() < 1e-4


def test_an_unwritable_cache_falls_back_to_torch_with_one_warning(
    tmp_path: Path, torch_vectors: np.ndarray
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes through permissions: no folder can be made
        folder.chmod(0o755)
        folder.rmdir()
        folder.write_text("a file where the cache directory should be")
    try:
        embedder = TextEmbedder(onnx_dir=folder)
        with pytest.warns(OnnxFallbackWarning, match="using torch instead") as caught:
            vectors = embedder.encode(TEXTS)
        assert len(caught) == 1
        assert (embedder.backend, embedder.precision) == ("torch", "fp32")
        assert np.abs(vectors - torch_vectors).max() < 1e-6
        with warnings.catch_warnings():
            warnings.simplefilter("error", OnnxFallbackWarning)
            embedder.encode(["a second call warns no more"])
    finally:
        if folder.is_dir():
            folder.chmod(0o755)
            assert _files(folder) == []  # nothing half-written


_EXPORT = """
import sys, warnings
from aem.compare import TextEmbedder
from aem.compare.embedder import OnnxFallbackWarning
warnings.simplefilter("error", OnnxFallbackWarning)
embedder = TextEmbedder(onnx_dir=sys.argv[1])
vector = embedder.encode(["two processes, one cache"])[0]
print(embedder.backend, " ".join(f"{x:.6f}" for x in vector[:8]))
"""


def test_two_processes_exporting_into_one_empty_cache_both_succeed(tmp_path: Path) -> None:
    """Both export at once; each renames a complete file into place, neither crashes, and
    no temporary file is left."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _EXPORT, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=900) for run in runs]
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err[-2000:]
        assert "OnnxFallbackWarning" not in err
    lines = {out.strip() for out, _ in outputs}
    assert len(lines) == 1 and lines.pop().startswith("onnx ")
    assert _files(tmp_path) == ["model.onnx"]
    _no_fallback(tmp_path)  # the file left is a complete, loadable export


def test_is_exported_tells_a_cached_export_from_a_missing_one_and_writes_nothing(
    exported: Path, tmp_path: Path
) -> None:
    from aem.compare.embedder import default_model_path
    from aem.compare.onnxmodel import is_exported

    model = default_model_path()
    assert is_exported(model, int8=False, cache_dir=exported)
    assert not is_exported(model, int8=True, cache_dir=exported)  # only fp32 was exported
    assert not is_exported(model, int8=False, cache_dir=tmp_path)
    assert not is_exported(str(tmp_path / "no-such-model"), int8=False, cache_dir=exported)
    assert _files(exported) == ["model.onnx"] and _files(tmp_path) == []
