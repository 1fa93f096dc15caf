"""What ``groundedness`` costs per RAG answer, against the encoder's own rate.

Run: ``python -m bench.groundedness.speed [--data DIR] [--answers N] [--rounds R]
[--backends auto,torch] [--workloads shared,distinct] [--dump FILE] [--compare FILE]
[--no-audit-path]``

Answers: the RAGTruth Summary development answers when ``AEM_DEV_DATA`` (or ``--data``)
names the development sets; else synthetic RAG sessions (three documents, a five-claim
answer). Two workloads, side by side: *shared* — several models' summaries of one article,
whole articles in file order until ``--answers`` are reached (synthetic: two answers per
document set), so most passages are encoded once for three answers; *distinct* — the
first answer of each article, one article per answer (synthetic: one answer per document
set), as production traffic has it, where the embedding cache cannot help. Only the
``groundedness`` metric runs, through :class:`aem.evaluate.Evaluator` as an audit does
(one evaluator, one embedder and its cache for the whole run).

Per round and backend: a fresh evaluator scores every answer (CPU seconds of this process,
all threads), then a fresh embedder makes one raw ``encode_uncached`` call over the unique
texts the evaluator sent to the model — the floor any groundedness rule over those texts
pays. Reported: CPU seconds per answer, texts encoded per answer, and the *rate ratio*
raw / groundedness (1.0 = nothing but forward passes); medians over rounds, backends
interleaved within each round so the machine's load hits them alike.

The audit path, in the same run and rounds: the same answers written as a trace file and
audited by ``aem audit --workers 1`` child processes with the same settings, only
``groundedness`` enabled (:mod:`bench.groundedness.auditpath`: CPU seconds per answer,
process start and model load subtracted), and the ratio audit path / in-process; a ratio
near 1.0 says the command adds nothing per answer (``--no-audit-path`` skips it).

Verdicts: ``--dump`` writes each answer's groundedness result (outcome, explanation,
score, evidence, unverified claims) as JSON; ``--compare`` checks them against a dump
written by another version of the code — a speed change must leave every one identical.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from aem.cases import Case, load_cases  # noqa: E402
from aem.compare import TextEmbedder  # noqa: E402
from aem.config import load_config  # noqa: E402
from aem.evaluate import Evaluator  # noqa: E402
from aem.foundation.model import Session, TurnKind  # noqa: E402
from aem.metrics.registry import resolve_metrics  # noqa: E402
from aem.settings import AemConfig  # noqa: E402
from aem.testing import make_session, make_turn  # noqa: E402
from bench.devdata import ENV, dev_set  # noqa: E402
from bench.embeddings.run import write_report  # noqa: E402
from bench.groundedness.auditpath import audit_cpu, recorded_lines, session_lines  # noqa: E402

DEV_SET = "ragtruth-summary-dev"
NO_CITATIONS = "metrics.groundedness.require_citation=never"  # RAGTruth answers cite nothing


def _article(session_id: str) -> str:
    """``ragtruth/summary/<article>/<model>``: the article an answer summarises."""
    parts = session_id.split("/")
    return parts[2] if len(parts) > 2 else session_id


def dev_sessions(
    folder: Path, config: AemConfig, answers: int, distinct: bool = False
) -> tuple[list[Session], dict[str, Case]]:
    """Whole articles' answers, in file order, until ``answers`` are reached; with
    ``distinct`` one answer per article (its first), as production traffic has it."""
    from collectors.reading import SessionReading

    cases = load_cases(folder / "cases.jsonl")
    reader = SessionReading(config.assembly, [])
    closed = [s for batch in reader.files([str(folder / "traces.otlp.jsonl")]) for s in batch]
    builder = Evaluator(config, cases, metrics=[])
    by_article: dict[str, list[Session]] = {}
    for item in closed:
        by_article.setdefault(_article(item.session_id), []).append(builder.build(item))
    chosen: list[Session] = []
    for group in by_article.values():
        if len(chosen) >= answers:
            break
        chosen.extend(group[:1] if distinct else group)
    return chosen, cases


_SUBJECTS = ["The museum", "The library", "The ferry", "The clinic", "The airport", "The park"]
_FACTS = [
    "opens at {h}:00 on weekdays",
    "was renovated in {y}",
    "charges {p} euros for an adult ticket",
    "is closed on public holidays",
    "offers free guided tours every Saturday",
    "has {n} parking spaces for visitors",
    "can be reached by bus line {n}",
    "requires booking at least {n} days ahead",
]


def _fact(rng: random.Random, subject: str) -> str:
    fact = rng.choice(_FACTS).format(
        h=rng.randint(6, 11), y=rng.randint(1990, 2024), p=rng.randint(5, 40), n=rng.randint(2, 90)
    )
    return f"{subject} {fact}."


def synthetic_sessions(answers: int, seed: int = 7, distinct: bool = False) -> list[Session]:
    """RAG sessions: three documents of six sentences, answers of five claims (most from
    the documents, some with a changed number or invented), two answers per document set
    (one with ``distinct``)."""
    rng = random.Random(seed)
    sessions: list[Session] = []
    while len(sessions) < answers:
        documents = [
            " ".join(_fact(rng, rng.choice(_SUBJECTS)) for _ in range(6)) for _ in range(3)
        ]
        said = [s + "." for d in documents for s in d.split(". ") if s]
        for variant in range(1 if distinct else 2):
            claims = [
                rng.choice(said).rstrip(".").rstrip(".") + "."
                if rng.random() < 0.7
                else _fact(rng, rng.choice(_SUBJECTS))
                for _ in range(5)
            ]
            question = "What should a visitor know before going?"
            turns = [
                make_turn(TurnKind.RETRIEVAL, "retrieval kb", documents=documents),
                make_turn(TurnKind.ANSWER, "answer", text=" ".join(claims)),
            ]
            number = len(sessions)
            sessions.append(
                make_session(
                    *turns, session_id=f"synthetic-{number}-{variant}", user_inputs=[question]
                )
            )
    return sessions[:answers]


class _Recorder:
    """The texts the evaluator's embedder is asked for, in order (the real encode runs)."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self.texts: list[str] = []
        self._encode = embedder.encode
        embedder.encode = self  # type: ignore[method-assign]

    def __call__(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self._encode(texts)


def verdicts(reports: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """Each answer's groundedness results as plain JSON (what must not change)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for report in reports:
        out[report.session_id] = [
            m.model_dump(mode="json")
            for turn in report.turns
            for m in turn.metrics
            if m.name == "groundedness"
        ]
    return out


def groundedness_evaluator(
    cases: dict[str, Case], config: AemConfig, backend: str
) -> tuple[Evaluator, TextEmbedder]:
    """A fresh evaluator running only ``groundedness`` on ``backend``, and its embedder,
    the model loaded (outside any timer)."""
    compare = config.compare.model_copy(update={"embedding_backend": backend})
    run_config = config.model_copy(update={"compare": compare})
    metrics = [m for m in resolve_metrics(run_config) if m.name == "groundedness"]
    evaluator = Evaluator(run_config, cases, metrics)
    embedder = evaluator.comparator().embedder
    embedder.encode_uncached(["load the model outside the timer"])
    return evaluator, embedder


def one_round(
    sessions: list[Session], cases: dict[str, Case], config: AemConfig, backend: str
) -> dict[str, Any]:
    """A fresh evaluator over every answer, then one raw encode of the texts it embedded."""
    evaluator, embedder = groundedness_evaluator(cases, config, backend)
    compare = evaluator.config.compare
    recorder = _Recorder(embedder)
    fresh = [copy.deepcopy(s) for s in sessions]  # evaluating adds a session turn
    start = time.process_time()
    reports = [evaluator.evaluate(s) for s in fresh]
    cpu = time.process_time() - start
    unique = list(dict.fromkeys(recorder.texts))
    raw = TextEmbedder.from_settings(compare)
    raw.encode_uncached(["load the model outside the timer"])
    start = time.process_time()
    raw.encode_uncached(unique)
    raw_cpu = time.process_time() - start
    return {
        "cpu": cpu,
        "raw_cpu": raw_cpu,
        "texts_asked": len(recorder.texts),
        "texts_encoded": embedder.texts_encoded - 1,
        "unique_texts": len(unique),
        "verdicts": verdicts(reports),
        "backend_used": embedder.precision,
    }


@dataclass
class Answers:
    """The answers measured: built sessions for the in-process figure, the same answers
    as trace lines (and the cases file) for the audit path."""

    name: str
    sessions: list[Session]
    cases: dict[str, Case]
    lines: list[str]
    cases_path: Path | None


def audit_overrides(config: AemConfig, backend: str) -> list[str]:
    """``--set`` values giving ``aem audit`` the bench's settings, only groundedness on."""
    others = [m.name for m in resolve_metrics(config) if m.name != "groundedness"]
    threads = config.compare.embedding_threads
    return [
        NO_CITATIONS,
        f"compare.embedding_backend={backend}",
        *([f"compare.embedding_threads={threads}"] if threads is not None else []),
        f"metrics.disabled={json.dumps(others)}",
    ]


def measure(
    answers: Answers, config: AemConfig, backends: list[str], rounds: int, audit_path: bool
) -> dict[str, Any]:
    """Every backend each round (interleaved, so the machine's load hits them alike): the
    in-process round, then the audit path over the same answers; medians over rounds."""
    seen: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
    for _ in range(rounds):
        for backend in backends:
            run = one_round(answers.sessions, answers.cases, config, backend)
            if audit_path:
                overrides = audit_overrides(config, backend)
                run["audit_cpu"] = audit_cpu(answers.lines, answers.cases_path, overrides)
            seen[backend].append(run)
    return {backend: _figures(runs, len(answers.sessions)) for backend, runs in seen.items()}


def _figures(runs: list[dict[str, Any]], answers: int) -> dict[str, Any]:
    """One backend's figures: medians over its rounds, per answer."""
    cpu = statistics.median(r["cpu"] for r in runs)
    raw = statistics.median(r["raw_cpu"] for r in runs)
    audit: dict[str, float] = {}
    if "audit_cpu" in runs[0]:
        per_answer = statistics.median(r["audit_cpu"] for r in runs)
        audit = {
            "audit_cpu_s_per_answer": per_answer,
            "audit_ratio": per_answer / (cpu / answers),
        }
    return {
        "used": runs[-1]["backend_used"],
        "cpu_s_per_answer": cpu / answers,
        "raw_encode_cpu_s_per_answer": raw / answers,
        "rate_ratio": raw / cpu,
        **audit,
        "texts_encoded_per_answer": runs[-1]["texts_encoded"] / answers,
        "texts_asked_per_answer": runs[-1]["texts_asked"] / answers,
        "verdicts_same_every_round": all(r["verdicts"] == runs[0]["verdicts"] for r in runs),
        "verdicts": runs[0]["verdicts"],
    }


def _source(args: argparse.Namespace, config: AemConfig, distinct: bool) -> Answers:
    folder = args.data / DEV_SET if args.data else dev_set(DEV_SET)
    traces = folder / "traces.otlp.jsonl"
    shape = "distinct documents" if distinct else "shared documents"
    if traces.is_file():
        sessions, cases = dev_sessions(folder, config, args.answers, distinct)
        articles = len({_article(s.session_id) for s in sessions})
        lines = recorded_lines(traces, [s.session_id for s in sessions])
        name = f"RAGTruth Summary dev, {shape} ({articles} articles)"
        return Answers(name, sessions, cases, lines, folder / "cases.jsonl")
    sessions = synthetic_sessions(args.answers, distinct=distinct)
    name = f"synthetic, {shape} (no {ENV}/{DEV_SET})"
    return Answers(name, sessions, {}, session_lines(sessions), None)


WORKLOADS = {"shared": False, "distinct": True}


def _print_figures(backend: str, f: dict[str, Any]) -> None:
    print(
        f"{backend:6} ({f['used']}): {f['cpu_s_per_answer']:.3f} CPU s/answer, raw encode "
        f"{f['raw_encode_cpu_s_per_answer']:.3f}, rate ratio {f['rate_ratio']:.2f}; "
        f"{f['texts_encoded_per_answer']:.1f} texts encoded per answer "
        f"({f['texts_asked_per_answer']:.1f} asked)"
    )
    if "audit_cpu_s_per_answer" in f:
        print(
            f"{'':6} audit path (aem audit --workers 1, process start subtracted): "
            f"{f['audit_cpu_s_per_answer']:.3f} CPU s/answer, "
            f"{f['audit_ratio']:.2f}x the in-process figure"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, help=f"the development sets (default: ${ENV})")
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="encoder CPU threads")
    parser.add_argument("--backends", default="auto", help="comma-separated, e.g. auto,torch")
    parser.add_argument(
        "--workloads",
        default="shared,distinct",
        help="shared (answers grouped by article), distinct (one answer per article)",
    )
    parser.add_argument("--dump", type=Path, help="write the verdicts here (JSON)")
    parser.add_argument("--compare", type=Path, help="verdicts must equal this dump's")
    parser.add_argument(
        "--no-audit-path",
        dest="audit_path",
        action="store_false",
        help="skip the aem audit figure (child processes)",
    )
    args = parser.parse_args(argv)
    config = load_config(None, [NO_CITATIONS, f"compare.embedding_threads={args.threads}"])
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    print(f"load average {os.getloadavg()[0]:.1f}")
    status = 0
    first: dict[str, Any] = {}
    report: dict[str, Any] = {"rounds": args.rounds, "threads": args.threads, "workloads": {}}
    for workload in [w.strip() for w in args.workloads.split(",") if w.strip()]:
        answers = _source(args, config, WORKLOADS[workload])
        print(f"{workload}: {len(answers.sessions)} answers: {answers.name}")
        figures = measure(answers, config, backends, args.rounds, args.audit_path)
        for backend, f in figures.items():
            _print_figures(backend, f)
        for backend in backends[1:]:
            same = figures[backend]["verdicts"] == figures[backends[0]]["verdicts"]
            print(f"verdicts {backends[0]} == {backend}: {same}")
            status |= not same
        first.update(figures[backends[0]]["verdicts"])
        report["workloads"][workload] = {
            "source": answers.name,
            "answers": len(answers.sessions),
            "figures": {
                b: {k: v for k, v in f.items() if k != "verdicts"} for b, f in figures.items()
            },
        }
    if args.dump:
        args.dump.write_text(json.dumps(first, indent=1, sort_keys=True), encoding="utf-8")
    if args.compare:
        status |= _compare(args.compare, first)
    write_report("groundedness-speed", report)
    return status


def _compare(path: Path, now: dict[str, Any]) -> bool:
    """Whether any answer's verdicts differ from the dump at ``path`` (and which)."""
    before = json.loads(path.read_text(encoding="utf-8"))
    differ = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    print(f"verdicts equal to {path.name}: {not differ} ({len(differ)} answers differ)")
    for key in differ[:5]:
        print(f"  {key}: {before.get(key)} -> {now.get(key)}")
    return bool(differ)


if __name__ == "__main__":
    raise SystemExit(main())
