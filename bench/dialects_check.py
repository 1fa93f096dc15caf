"""Development check: real instrumentation output → the same turns in every dialect.

Reads the fixtures recorded from real instrumentations (``tests/fixtures/instrumented``): the same
LangGraph agent under OpenInference and under OpenLLMetry, plus the OpenAI Agents SDK
(OpenInference) and the OpenAI SDK (official GenAI instrumentation). Prints each
session's turns as (kind, tool, call id, arguments, result, text) and whether the two
LangGraph recordings agree.

    python -m bench.dialects_check [DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

from collectors.assembler import SessionAssembler
from collectors.readers import read_batches
from collectors.sessions import build_session

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "instrumented"


def turns_of(path: Path) -> list[list[tuple]]:
    assembler = SessionAssembler(idle=10**9)
    clock = 0
    for batch in read_batches(str(path)):
        for span in batch.spans:
            clock += 1
            assembler.add(span, clock)
    shapes = []
    for closed in assembler.drain():
        session = build_session(closed)
        if not session.turns:
            continue
        shapes.append(
            [
                (
                    t.kind.value,
                    t.tool_call.name if t.tool_call else None,
                    t.tool_call.call_id if t.tool_call else None,
                    t.tool_call.arguments if t.tool_call else None,
                    str(t.tool_call.result) if t.tool_call else None,
                    t.text,
                )
                for t in session.turns
            ]
        )
    return shapes


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT
    results = {}
    for path in sorted(folder.glob("*.otlp.jsonl")):
        results[path.name] = turns_of(path)
        print(path.name)
        for shape in results[path.name]:
            for turn in shape:
                print("   ", turn)
    a = results.get("langgraph-openinference.otlp.jsonl")
    b = results.get("langgraph-openllmetry.otlp.jsonl")
    same = a == b and a is not None
    print(f"LangGraph run: OpenInference and OpenLLMetry give the same turns: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
