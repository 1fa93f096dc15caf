"""Bad input: each problem is reported once with file and line, the rest is evaluated."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import SAMPLES, run_audit, session

REFUNDS = (SAMPLES / "march_refunds.otlp.jsonl").read_text().splitlines()
TRIP = (SAMPLES / "parallel_tools.otlp.jsonl").read_text().splitlines()


def _write(tmp_path: Path, lines: Sequence[str | bytes]) -> Path:
    path = tmp_path / "mixed.otlp.jsonl"
    with path.open("wb") as out:
        for line in lines:
            out.write(line if isinstance(line, bytes) else line.encode())
            out.write(b"\n")
    return path


def _span(line: str) -> dict:
    return json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]


def _replace_span(line: str, **changes: object) -> str:
    document = json.loads(line)
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(changes)
    return json.dumps(document)


def _issues(report: dict, kind: str) -> list[dict]:
    found = [i for i in report["issues"] if i["kind"] == kind]
    found += [i for s in report["sessions"] for i in s["issues"] if i["kind"] == kind]
    return found


def _assert_refunds_intact(report: dict) -> None:
    refunds = session(report, "refunds-march")
    assert [t["kind"] for t in refunds["turns"]] == [
        "reasoning",
        "tool_call",
        "tool_call",
        "tool_call",
        "answer",
    ]


def test_truncated_line_is_reported_with_its_line_and_the_rest_evaluated(tmp_path: Path) -> None:
    lines = [*REFUNDS, TRIP[0][: len(TRIP[0]) // 2], *TRIP[1:]]
    path = _write(tmp_path, lines)
    code, report, _ = run_audit(str(path))
    [issue] = _issues(report, "truncated_json")
    assert issue["source"] == str(path) and issue["line"] == len(REFUNDS) + 1
    _assert_refunds_intact(report)
    assert report["skipped"]["by_kind"]["truncated_json"] == 1
    assert code == 1  # the trip session still has its failing tool


def test_non_json_line(tmp_path: Path) -> None:
    path = _write(tmp_path, [*REFUNDS[:3], "this is not json", *REFUNDS[3:]])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "bad_json")
    assert issue["line"] == 4
    _assert_refunds_intact(report)


def test_short_trace_id_skips_only_that_span(tmp_path: Path) -> None:
    bad = _replace_span(TRIP[0], traceId="abcdef0123")
    path = _write(tmp_path, [*REFUNDS, bad, *TRIP[1:]])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "bad_span")
    assert "10" not in issue["message"] or "32 hex" in issue["message"]
    assert issue["line"] == len(REFUNDS) + 1 and issue["spans_skipped"] == 1
    assert report["skipped"]["total_spans_skipped"] >= 1
    _assert_refunds_intact(report)
    trip = session(report, "trip-planner-7")
    assert len(trip["turns"]) == 4


def test_missing_parent_becomes_a_reported_root(tmp_path: Path) -> None:
    root_index = next(i for i, line in enumerate(TRIP) if not _span(line).get("parentSpanId"))
    path = _write(tmp_path, [*REFUNDS, *(line for i, line in enumerate(TRIP) if i != root_index)])
    _, report, _ = run_audit(str(path))
    orphans = _issues(report, "orphan_span")
    assert len(orphans) == len(TRIP) - 1  # every child of the lost root, once each
    assert len({o["span_id"] for o in orphans}) == len(orphans)
    assert all(o["source"] == str(path) and o["line"] for o in orphans)
    assert len(session(report, "trip-planner-7")["turns"]) == 4
    _assert_refunds_intact(report)


def test_parent_cycle_is_broken_and_reported(tmp_path: Path) -> None:
    a = _span(TRIP[0])
    b = _span(TRIP[1])
    cyc_a = _replace_span(TRIP[0], parentSpanId=b["spanId"])
    cyc_b = _replace_span(TRIP[1], parentSpanId=a["spanId"])
    path = _write(tmp_path, [*REFUNDS, cyc_a, cyc_b, *TRIP[2:]])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "parent_cycle")
    assert a["spanId"] in issue["message"] and b["spanId"] in issue["message"]
    assert session(report, "trip-planner-7")["turns"]
    _assert_refunds_intact(report)


def test_duplicate_span_id_keeps_the_first_copy(tmp_path: Path) -> None:
    path = _write(tmp_path, [*REFUNDS, REFUNDS[2], *TRIP])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "duplicate_span")
    assert issue["line"] == len(REFUNDS) + 1 and issue["spans_skipped"] == 1
    _assert_refunds_intact(report)


def test_five_megabyte_attribute_is_truncated_not_fatal(tmp_path: Path) -> None:
    document = json.loads(TRIP[0])
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"].append({"key": "blob", "value": {"stringValue": "x" * 5_000_000}})
    path = _write(tmp_path, [*REFUNDS, json.dumps(document), *TRIP[1:]])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "attribute_truncated")
    assert "5,000,000" in issue["message"] and issue["line"] == len(REFUNDS) + 1
    assert len(session(report, "trip-planner-7")["turns"]) == 4
    _assert_refunds_intact(report)


def test_invalid_utf8_is_salvaged_and_reported(tmp_path: Path) -> None:
    raw = TRIP[-1].encode().replace(b"trip_planner", b"trip_pl\xffanner", 1)
    assert b"\xff" in raw
    path = _write(tmp_path, [*REFUNDS, *[line.encode() for line in TRIP[:-1]], raw])
    _, report, _ = run_audit(str(path))
    [issue] = _issues(report, "invalid_utf8")
    assert issue["line"] == len(REFUNDS) + len(TRIP)
    assert session(report, "trip-planner-7")["turns"]
    _assert_refunds_intact(report)


def test_gzip_and_protobuf_inputs_give_the_same_turns(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    gz = tmp_path / "refunds.otlp.jsonl.gz"
    gz.write_bytes(gzip.compress("\n".join(REFUNDS).encode()))
    request = ExportTraceServiceRequest()
    for line in REFUNDS:
        document = json.loads(line)
        for rs in document["resourceSpans"]:
            out_rs = request.resource_spans.add()
            for ss in rs["scopeSpans"]:
                out_ss = out_rs.scope_spans.add()
                for raw in ss["spans"]:
                    span = out_ss.spans.add()
                    span.trace_id = bytes.fromhex(raw["traceId"])
                    span.span_id = bytes.fromhex(raw["spanId"])
                    if raw.get("parentSpanId"):
                        span.parent_span_id = bytes.fromhex(raw["parentSpanId"])
                    span.name = raw["name"]
                    span.start_time_unix_nano = int(raw["startTimeUnixNano"])
                    span.end_time_unix_nano = int(raw["endTimeUnixNano"])
                    for attribute in raw.get("attributes", []):
                        kv = span.attributes.add()
                        kv.key = attribute["key"]
                        value = attribute["value"]
                        if "stringValue" in value:
                            kv.value.string_value = value["stringValue"]
                        elif "intValue" in value:
                            kv.value.int_value = int(value["intValue"])
    pb = tmp_path / "refunds.pb"
    pb.write_bytes(request.SerializeToString())
    _, from_gzip, _ = run_audit(str(gz))
    _, from_proto, _ = run_audit(str(pb))
    _, from_json, _ = run_audit(str(SAMPLES / "march_refunds.otlp.jsonl"))

    def shape(r: dict) -> list:
        return [(t["kind"], t["name"], t["span_ids"]) for t in session(r, "refunds-march")["turns"]]

    assert shape(from_gzip) == shape(from_json) == shape(from_proto)


def test_garbage_protobuf_is_reported(tmp_path: Path) -> None:
    pb = tmp_path / "garbage.pb"
    pb.write_bytes(b"\x0a\xff\xff\xff\xff\x0f not protobuf")
    code, report, err = run_audit(str(pb))
    assert _issues(report, "bad_protobuf")
    assert code == 2 and "no spans" in err


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run_audit(str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no such file" in err


@pytest.mark.parametrize("content", ["{not json\n", '{"session_id": 5}\n'])
def test_bad_cases_file_is_a_usage_error(tmp_path: Path, content: str) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(content)
    code, _, err = run_audit(str(SAMPLES / "march_refunds.otlp.jsonl"), "--cases", str(cases))
    assert code == 2 and "cases.jsonl:1" in err


def _proto_bytes(lines: list[str]) -> bytes:
    """The records of ``lines`` as one OTLP protobuf request (ids, names, times only)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    for line in lines:
        out_ss = request.resource_spans.add().scope_spans.add()
        raw = _span(line)
        span = out_ss.spans.add()
        span.trace_id = bytes.fromhex(raw["traceId"])
        span.span_id = bytes.fromhex(raw["spanId"])
        span.name = raw["name"]
    return request.SerializeToString()


def test_multi_member_gzip_is_read_to_the_end(tmp_path: Path) -> None:
    both = tmp_path / "both.otlp.jsonl.gz"  # what `gzip -c a b > both` writes
    both.write_bytes(
        gzip.compress("\n".join(REFUNDS).encode() + b"\n")
        + gzip.compress("\n".join(TRIP).encode() + b"\n")
    )
    code, report, _ = run_audit(str(both))
    assert report["spans_read"] == len(REFUNDS) + len(TRIP)
    assert len(session(report, "trip-planner-7")["turns"]) == 4  # from the second member
    _assert_refunds_intact(report)
    assert code == 1


def test_corrupt_and_truncated_compressed_files_are_named_and_the_rest_read(
    tmp_path: Path,
) -> None:
    corrupt = bytearray(gzip.compress("\n".join(TRIP).encode()))
    middle = len(corrupt) // 2
    corrupt[middle : middle + 8] = b"\xff" * 8
    (tmp_path / "a_corrupt.otlp.jsonl.gz").write_bytes(bytes(corrupt))
    packed = gzip.compress(_proto_bytes(TRIP))
    (tmp_path / "b_truncated.pb.gz").write_bytes(packed[: len(packed) // 2])
    (tmp_path / "c_refunds.otlp.jsonl").write_text("\n".join(REFUNDS) + "\n")
    code, report, _ = run_audit(str(tmp_path))
    unreadable = {Path(i["source"]).name: i["message"] for i in _issues(report, "unreadable")}
    assert set(unreadable) == {"a_corrupt.otlp.jsonl.gz", "b_truncated.pb.gz"}
    assert "corrupt compressed data" in unreadable["a_corrupt.otlp.jsonl.gz"]
    assert "truncated" in unreadable["b_truncated.pb.gz"]
    _assert_refunds_intact(report)
    assert code in (0, 1)


def test_oversized_line_is_skipped_to_the_next_newline(tmp_path: Path) -> None:
    # 10 MB of one line behind 10 kB of gzip: held whole, it would cost 10 MB and more.
    endless = b'{"resourceSpans": ["' + b"x" * 10_000_000 + b'"]}'
    path = tmp_path / "bomb.otlp.jsonl.gz"
    lines = [line.encode() for line in REFUNDS]
    path.write_bytes(gzip.compress(b"\n".join([lines[0], endless, *lines[1:]]) + b"\n"))
    _, report, _ = run_audit(str(path), "--max-record-bytes", "1000000")
    [issue] = _issues(report, "record_too_large")
    assert issue["line"] == 2 and "10,000,0" in issue["message"]
    assert report["spans_read"] == len(REFUNDS)  # the lines after it were read
    _assert_refunds_intact(report)


def test_endless_device_named_directly_is_bounded_and_ends() -> None:
    code, report, err = run_audit("/dev/zero", "--max-record-bytes", "4096")
    [issue] = _issues(report, "record_too_large")
    assert issue["source"] == "/dev/zero" and "rest of the file skipped" in issue["message"]
    assert code == 2 and "no spans" in err


def test_non_regular_file_under_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "refunds.otlp.jsonl").write_text("\n".join(REFUNDS) + "\n")
    os.mkfifo(tmp_path / "pipe.otlp.jsonl")  # opening it would block the run forever
    _, report, _ = run_audit(str(tmp_path))
    [issue] = _issues(report, "not_regular_file")
    assert issue["source"] == str(tmp_path / "pipe.otlp.jsonl")
    _assert_refunds_intact(report)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 0 directory")
def test_unreadable_sub_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "refunds.otlp.jsonl").write_text("\n".join(REFUNDS) + "\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "trip.otlp.jsonl").write_text("\n".join(TRIP) + "\n")
    locked.chmod(0)
    try:
        _, report, _ = run_audit(str(tmp_path))
    finally:
        locked.chmod(0o755)
    [issue] = _issues(report, "unreadable")
    assert issue["source"] == str(locked) and "directory skipped" in issue["message"]
    _assert_refunds_intact(report)


def test_sub_directory_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    """Even root cannot list a directory whose path is beyond PATH_MAX: the trip session
    inside it must be reported missing, not silently vanish."""
    (tmp_path / "refunds.otlp.jsonl").write_text("\n".join(REFUNDS) + "\n")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(20):  # 20 x 250 characters: past PATH_MAX (4096)
        os.mkdir("d" * 250, dir_fd=folder)
        inner = os.open("d" * 250, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
    trace = os.open("trip.otlp.jsonl", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
    os.write(trace, ("\n".join(TRIP) + "\n").encode())
    os.close(trace)
    os.close(folder)
    _, report, _ = run_audit(str(tmp_path))
    [issue] = _issues(report, "unreadable")
    assert (
        issue["source"].startswith(str(tmp_path / "d")) and "directory skipped" in issue["message"]
    )
    assert not any(s["session_id"] == "trip-planner-7" for s in report["sessions"])
    _assert_refunds_intact(report)


def test_bom_lone_surrogate_and_bare_nan_keep_their_records(tmp_path: Path) -> None:
    surrogate = TRIP[1].replace('"python"', '"py\\ud800thon"', 1)
    assert surrogate != TRIP[1]
    document = json.loads(TRIP[2])
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"].append({"key": "score", "value": {"doubleValue": 0.5}})
    nan = json.dumps(document).replace('"doubleValue": 0.5', '"doubleValue": NaN')
    lines = [b"\xef\xbb\xbf" + TRIP[0].encode(), surrogate.encode(), nan.encode()]
    path = _write(tmp_path, [*lines, *[line.encode() for line in TRIP[3:]], *REFUNDS])
    _, report, _ = run_audit(str(path))
    assert [i["line"] for i in _issues(report, "utf8_bom")] == [1]
    assert [i["line"] for i in _issues(report, "lone_surrogate")] == [2]
    assert [i["line"] for i in _issues(report, "non_standard_json")] == [3]
    assert report["skipped"]["total_spans_skipped"] == 0
    assert report["spans_read"] == len(TRIP) + len(REFUNDS)
    assert len(session(report, "trip-planner-7")["turns"]) == 4
    _assert_refunds_intact(report)


def _audit_with_cases(tmp_path: Path, name: str, content: str) -> tuple[int, str]:
    cases = tmp_path / name
    cases.write_text(content)
    code, _, err = run_audit(str(SAMPLES / "march_refunds.otlp.jsonl"), "--cases", str(cases))
    return code, " ".join(err.split())  # rich wraps long messages


def test_duplicate_session_id_in_cases_names_both_lines(tmp_path: Path) -> None:
    first = json.dumps({"session_id": "refunds-march", "key_points": ["refund total"]})
    second = json.dumps({"session_id": "refunds-march"})
    code, err = _audit_with_cases(tmp_path, "cases.jsonl", f"{first}\n\n{second}\n")
    assert code == 2
    assert "cases.jsonl:3: duplicate session_id 'refunds-march' (first at line 1)" in err


def test_duplicate_session_id_in_yaml_cases_names_both_lines(tmp_path: Path) -> None:
    content = "cases:\n  - session_id: a\n  - session_id: b\n    type: happy\n  - session_id: a\n"
    code, err = _audit_with_cases(tmp_path, "cases.yaml", content)
    assert code == 2 and "cases.yaml:5: duplicate session_id 'a' (first at line 2)" in err


def test_yaml_alias_bomb_in_cases_is_refused(tmp_path: Path) -> None:
    levels = [' a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        levels.append(f" {name}: &{name} [{','.join([f'*{previous}'] * 9)}]")
    content = "- session_id: refunds-march\n  facts:\n" + "\n".join(f"   {x}" for x in levels)
    code, err = _audit_with_cases(tmp_path, "cases.yaml", content + "\n")
    assert code == 2 and "alias *a not allowed in a cases file" in err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("cases.yaml", "42\n", "expected a list of cases"),
        ("cases.yaml", "just a sentence\n", "expected a list of cases"),
        ("cases.yaml", "cases: 7\n", "expected a list of cases"),
        ("cases.yaml", "[" * 50_000 + "]" * 50_000 + "\n", "nested deeper than 64 levels"),
        ("cases.jsonl", "[" * 50_000 + "]" * 50_000 + "\n", "cases.jsonl:1: nested too deeply"),
        (
            "cases.jsonl",
            json.dumps({"session_id": "s", "facts": {"x": json.loads("[" * 100 + "]" * 100)}}),
            "cases.jsonl:1: nested deeper than 64 levels",
        ),
    ],
)
def test_scalar_and_deeply_nested_cases_are_usage_errors(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    code, err = _audit_with_cases(tmp_path, name, content)
    assert code == 2 and message in err


def test_terminal_view_escapes_control_sequences_and_markup_from_traces(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from aem.cli import app

    hostile = r"\u001b[2J\u001b]0;pwned\u0007[/bold][red]"  # JSON escapes: ESC, BEL
    lines = [
        line.replace("hotel search for Lisbon", f"hotel search for {hostile}Lisbon").replace(
            "trip-planner-7", f"trip-{hostile}planner-7"
        )
        for line in TRIP
    ]
    path = _write(tmp_path, lines)
    result = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["audit", str(path)])
    assert result.exit_code == 1, result.output  # the hotel timeout is still a root cause
    shown = result.stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert "session trip-\\x1b[2J\\x1b]0;pwned\\x07[/bold][red]planner-7" in shown
    assert "hotel search for \\x1b[2J\\x1b]0;pwned\\x07[/bold][red]Lisbon" in shown
