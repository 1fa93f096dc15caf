"""``bench.serve.run --mix unique``: sessions whose texts never repeat across copies.

Why: the sample mix repeats its texts, so after the first copy every embedding is a cache
hit and the figure flatters the server; the unique mix is only worth its name if no
model input or output (a span's message list) comes back in another copy, and every copy
is its own session.
"""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from bench.serve.workload import SESSION_KEYS, unique_copies


def _texts_and_keys(bodies: list[bytes]) -> tuple[set[str], set[str]]:
    texts: set[str] = set()
    keys: set[str] = set()
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    for kv in span.attributes:
                        value = kv.value.string_value
                        if kv.key in SESSION_KEYS:
                            keys.add(value)
                        elif kv.key.startswith("gen_ai.") and "messages" in kv.key and value:
                            texts.add(value)
    return texts, keys


def test_unique_copies_share_no_message_text_and_are_sessions_of_their_own() -> None:
    copies = list(unique_copies(4, prefix="t"))
    assert len({name for name, _ in copies}) == 4
    seen: set[str] = set()
    for name, bodies in copies:
        texts, keys = _texts_and_keys(bodies)
        assert texts, f"{name} carries no messages"
        assert keys == {name}
        assert not texts & seen, f"{name} repeats a text of an earlier copy"
        seen |= texts
