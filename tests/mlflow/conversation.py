"""Samples under fresh ids for the MLflow tests, and a conversation of two traces: an
``ok`` trace, then one whose turn fails a metric the trace's other turns pass.

Why: the traces list must show, per trace, the worst of its turns — MLflow shows one value
per assessment name and trace, so a trace holding ``tool_execution: pass`` on one turn and
``fail`` on another is where a per-turn value under the plain name would read ``pass``. The
samples are renamed (:func:`bench.backends.scaled.renamed`: fresh ids, since MLflow's trace
ids are global to the server) and given one ``gen_ai.conversation.id``, which MLflow groups
sessions by.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from aem_record import otlp_json

from bench.backends.scaled import renamed
from collectors.readers import read_batches
from tests.serve.conftest import SAMPLES
from tests.serve.sender import to_readable

# weather_genai (3 turns, all pass) then parallel_tools (t5 get_hotels timed out:
# tool_execution fails there and passes on t4 and t6 of the same trace).
PARTS = ("weather_genai", "parallel_tools")
FAILED_METRIC = "tool_execution"
MINUTE_NS = 60 * 10**9


def write_renamed(sample: str, path: Path, seed: str) -> Path:
    """A sample's spans under fresh ids (``seed``), written to ``path`` as one OTLP/JSON line."""
    spans = [s for b in read_batches(str(SAMPLES / f"{sample}.otlp.jsonl")) for s in b.spans]
    path.write_text(json.dumps(otlp_json([to_readable(s) for s in renamed(spans, seed)])) + "\n")
    return path


def write_conversation(path: Path, seed: str) -> str:
    """Write the two traces as one conversation to ``path``; its conversation id."""
    conversation = f"trip-{seed}"
    start = time.time_ns() - 60 * MINUTE_NS
    spans = []
    for n, name in enumerate(PARTS):
        part = [s for b in read_batches(str(SAMPLES / f"{name}.otlp.jsonl")) for s in b.spans]
        shift = start + 10 * n * MINUTE_NS - min(s.start_unix_nano for s in part)
        spans += renamed(part, f"{seed}-{name}", conversation=conversation, shift_ns=shift)
    path.write_text(json.dumps(otlp_json([to_readable(s) for s in spans])) + "\n")
    return conversation
