"""Ingest throughput: OTLP JSONL → assembled sessions with turn graphs, vs plain json.loads.

Both rates are measured in the same run on the same lines, so the ratio is what counts
(shared machines move ±15 % run to run). Also reports peak RSS of the streaming path on
a generated file of the requested size (default 1 GB), read once, sessions closed and
dropped as they complete.

    python -m bench.ingest.run [--source FILE] [--repeat N] [--big-mb 1024]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aem.graph import session_graph
from bench.devdata import dev_set
from collectors.assembler import SessionAssembler
from collectors.readers import read_batches

_TRACE_ID = re.compile(rb'"traceId":"[0-9a-fA-F]{8}')
HERE = Path(__file__).resolve()
DEFAULT_SOURCE = dev_set("tau-bench-airline-dev") / "traces.otlp.jsonl"
FALLBACK_SOURCE = HERE.parents[2] / "sample_traces" / "march_refunds.otlp.jsonl"


def _unique_copy(source: Path, target: Path, repeat: int) -> int:
    """Repeat the source with fresh trace ids/session ids so every copy is its own session."""
    lines = source.read_bytes().splitlines()
    spans = 0
    with target.open("wb") as out:
        for copy in range(repeat):
            tag = f"{copy:08x}".encode()
            for line in lines:
                line = _TRACE_ID.sub(b'"traceId":"' + tag, line)
                out.write(
                    line.replace(
                        b'conversation.id","value":{"stringValue":"',
                        b'conversation.id","value":{"stringValue":"' + tag + b"-",
                    )
                )
                out.write(b"\n")
            spans += sum(line.count(b'"spanId"') for line in lines)
    return spans


def plain_parse_rate(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            document = json.loads(line)
            for rs in document["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    count += len(ss["spans"])
    return count / (time.perf_counter() - start), count


def aem_rate(path: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    assembler = SessionAssembler(idle=20_000)
    clock = turns = 0

    def close(sessions: list) -> int:  # type: ignore[type-arg]
        total = 0
        for session in sessions:
            session_graph(session)
            total += len(session.turns)
        return total

    for batch in read_batches(str(path)):
        for span in batch.spans:
            clock += 1
            assembler.add(span, clock)
            if clock % 2_000 == 0:
                turns += close(assembler.pop_complete(clock))
    turns += close(assembler.drain())
    return clock / (time.perf_counter() - start), clock, turns


def peak_rss_child(path: Path) -> float:
    """Peak RSS (MB) of a fresh process ingesting ``path`` (this process's data don't count)."""
    code = (
        "import resource,sys;from bench.ingest.run import aem_rate;from pathlib import Path;"
        "aem_rate(Path(sys.argv[1]));"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parents[2],
    )
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=1024, help="0 skips the memory run")
    args = parser.parse_args(argv)
    source = args.source or (DEFAULT_SOURCE if DEFAULT_SOURCE.exists() else FALLBACK_SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "ingest.jsonl"
        _unique_copy(source, work, args.repeat)
        gc.collect()
        plain, spans = plain_parse_rate(work)
        ours, _, turns = aem_rate(work)
        print(
            f"source: {source.name} x{args.repeat}: {spans:,} spans, "
            f"{work.stat().st_size / 1e6:.1f} MB"
        )
        print(f"plain json.loads:            {plain:>10,.0f} spans/s")
        print(f"AEM (sessions + turn graphs): {ours:>10,.0f} spans/s  ({turns:,} turns)")
        print(f"ratio AEM / plain parse:      {ours / plain:>10.2f}  (target >= 0.33)")
        result = {"plain_spans_per_s": plain, "aem_spans_per_s": ours, "ratio": ours / plain}
        if args.big_mb:
            big = Path(tmp) / "big.jsonl"
            size = work.stat().st_size
            _unique_copy(source, big, max(1, int(args.big_mb * 1e6 / (size / args.repeat))))
            rss = peak_rss_child(big)
            print(
                f"peak RSS ingesting {big.stat().st_size / 1e9:.2f} GB: "
                f"{rss:,.0f} MB (target < 1024)"
            )
            result.update({"big_file_bytes": big.stat().st_size, "peak_rss_mb": rss})
        out_dir = HERE.parents[1] / "results"
        out_dir.mkdir(exist_ok=True)
        (out_dir / "ingest.json").write_text(json.dumps(result, indent=2))
    print(
        f"self peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
