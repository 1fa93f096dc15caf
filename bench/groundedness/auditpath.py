"""What ``groundedness`` costs per answer through ``aem audit``, the path users run.

Why a second figure next to the in-process one (:mod:`bench.groundedness.speed`): the
in-process bench times :meth:`aem.evaluate.Evaluator.evaluate` alone, so a cost that only
the command pays — reading and building the sessions, an evaluator or an embedding cache
made per session instead of per run, the report and the results store — would never show
in it. Here the same answers are written as an OTLP/JSON trace file and audited by a real
``aem audit --workers 1`` child process, with the same settings and only ``groundedness``.

Process start subtracted: each measurement is two child processes, one auditing a tiny
warm-up session (one short document, one short answer) and one auditing the warm-up
session followed by the answers. Both pay the interpreter, the imports, the configuration
and the model load (the warm-up's first text loads it); the difference is what the
answers cost, in CPU seconds of the child (user + system, all threads).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from aem.foundation.model import Session, SpanRecord, TurnKind
from bench.session_size.workload import otlp_line

WARM_UP_ID = "bench/warm-up"
_CONVERSATION = "gen_ai.conversation.id"


def rag_line(
    session_id: str, question: str, documents: Sequence[str], answer: str, number: int = 0
) -> str:
    """One RAG answer as one OTLP/JSON line, shaped like the RAGTruth development traces:
    an agent span, its retrieval (the documents) and its chat (the answer)."""
    trace_id = f"{number + 1:032x}"
    root, retrieval, chat = (f"{3 * number + k:016x}" for k in (1, 2, 3))
    asked = json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}])
    said = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}]}])
    found = json.dumps([{"id": f"doc-{i}", "content": d} for i, d in enumerate(documents)])
    start = 1_736_035_200_000_000_000 + number * 10_000_000_000
    spans = [
        SpanRecord(trace_id, root, None, "invoke_agent rag", 1, start, start + 2_500_000_000),
        SpanRecord(trace_id, retrieval, root, "retrieval kb", 1, start + 1, start + 2),
        SpanRecord(trace_id, chat, root, "chat model", 3, start + 3, start + 4),
    ]
    spans[0].attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "rag",
        "gen_ai.input.messages": asked,
    }
    spans[1].attributes = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "kb",
        "gen_ai.retrieval.query.text": question,
        "gen_ai.retrieval.documents": found,
    }
    spans[2].attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "model",
        "gen_ai.input.messages": asked,
        "gen_ai.output.messages": said,
    }
    for span in spans:
        span.attributes[_CONVERSATION] = session_id
    return otlp_line(spans)


def warm_up_line() -> str:
    """A session that loads the model and encodes a handful of texts, nothing more."""
    return rag_line(
        WARM_UP_ID,
        "When does the shop open?",
        ["The shop opens at nine on weekdays."],
        "The shop opens at nine.",
        number=999_999,
    )


def session_lines(sessions: Iterable[Session]) -> list[str]:
    """Built sessions (the synthetic ones) back as trace lines: their retrieved documents,
    their answer and their first user input."""
    lines = []
    for number, session in enumerate(sessions):
        documents = [
            d.content for t in session.turns if t.kind is TurnKind.RETRIEVAL for d in t.documents
        ]
        answer = next(t.text or "" for t in session.turns if t.kind is TurnKind.ANSWER)
        question = session.user_inputs[0] if session.user_inputs else ""
        lines.append(rag_line(session.session_id, question, documents, answer, number))
    return lines


def _conversation(line: str) -> str | None:
    for spans in json.loads(line).get("resourceSpans", []):
        for scope in spans.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for attribute in span.get("attributes", []):
                    if attribute.get("key") == _CONVERSATION:
                        value: str | None = attribute["value"].get("stringValue")
                        return value
    return None


def recorded_lines(traces: Path, session_ids: Sequence[str]) -> list[str]:
    """The recorded trace lines of ``session_ids`` (one session per line, as the
    development sets are written), in the order the ids are given."""
    wanted = set(session_ids)
    by_id: dict[str, str] = {}
    with traces.open(encoding="utf-8") as handle:
        for line in handle:
            found = _conversation(line)
            if found in wanted:
                by_id[found] = line.rstrip("\n")
    missing = wanted - set(by_id)
    if missing:
        raise ValueError(f"{len(missing)} sessions not in {traces.name}, e.g. {min(missing)}")
    return [by_id[s] for s in session_ids]


def _child_cpu(args: list[str]) -> float:
    """CPU seconds (user + system, every thread) one child process spends running ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: root causes found, a verdict, not a failure
        raise RuntimeError(f"aem audit exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def audit_cpu(lines: Sequence[str], cases: Path | None, overrides: Sequence[str]) -> float:
    """CPU seconds per answer of ``aem audit --workers 1`` over ``lines`` (one answer a
    line), the warm-up process's CPU subtracted (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="aem-audit-path-") as tmp:
        folder = Path(tmp)
        warm_file, full_file = folder / "warm.otlp.jsonl", folder / "answers.otlp.jsonl"
        warm_file.write_text(warm_up_line() + "\n", encoding="utf-8")
        full_file.write_text("\n".join([warm_up_line(), *lines]) + "\n", encoding="utf-8")
        command = [sys.executable, "-m", "aem.cli", "audit", "--workers", "1", "--summary"]
        command += ["--no-progress"]
        command += ["--cases", str(cases)] if cases is not None else []
        for override in overrides:
            command += ["--set", override]
        # Each process its own new results store: both pay the same store set-up.
        warm = _child_cpu([*command, "--store", str(folder / "warm.sqlite"), str(warm_file)])
        full = _child_cpu([*command, "--store", str(folder / "full.sqlite"), str(full_file)])
    return (full - warm) / len(lines)
