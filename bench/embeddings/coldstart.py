"""A one-session ``aem audit`` from a cold process: torch against the default backend.

Run: ``python -m bench.embeddings.coldstart [--runs 5]``

Why this bench: for a short audit the embedding backend's start — importing torch, or only
onnxruntime — is most of the time spent, so what a user waits for is the whole command,
not the encoder's rate. Each run is a fresh ``python -m aem.cli audit`` on one RAG session
(the first session of ``sample_traces/helpdesk_rag.otlp.jsonl``: its answers need the
model) with ``compare.embedding_backend`` set to ``torch`` (the baseline) and then left at
its default, runs interleaved so the load of other processes hits both alike; medians of
``--runs``. Both with ``--workers 1`` (all in one process) and with the default workers
(a forkserver and its workers start too).

Wall seconds and CPU seconds (user + system of the whole process tree: this process
becomes a child subreaper, so the forkserver's workers are reaped here and counted). On a
shared machine CPU seconds are the steadier figure. The ONNX export is made beforehand, so
this is the warm-cache start every later audit pays. The reports of both backends must be
byte-identical, and the default-backend audit must not have imported torch.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.embeddings.run import write_report  # noqa: E402

SAMPLE = REPO / "sample_traces" / "helpdesk_rag.otlp.jsonl"
SESSION_LINES = 3  # the sample's first session ("rag-cited") is its first three lines
BACKENDS = {"torch (before)": ["--set", 'compare.embedding_backend="torch"'], "default": []}
_PR_SET_CHILD_SUBREAPER = 36

# The audit, and then which of the heavy modules it imported (on stderr, last line).
_AUDIT = """
import sys
from aem.cli import main
try:
    main()
except SystemExit as exit:
    code = exit.code
print("LOADED", *sorted(m for m in ("torch", "sentence_transformers", "onnxruntime")
                        if m in sys.modules), file=sys.stderr)
"""


def one_session(folder: Path) -> Path:
    """The sample's first session alone, as a trace file of its own."""
    path = folder / "one_session.otlp.jsonl"
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:SESSION_LINES]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _become_subreaper() -> bool:
    """Orphaned descendants (the forkserver, once the audit exits) are reparented here,
    so their CPU time reaches this process's children's usage."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _reap_all(deadline: float) -> None:
    """Wait for every descendant left behind (until none is left, or ``deadline``)."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def audit_once(trace: Path, extra: list[str], workers: list[str]) -> dict[str, Any]:
    """One cold audit: wall and CPU seconds, its report, and the heavy modules it loaded."""
    args = [str(trace), "--json", "--no-progress", *workers, *extra]
    before, start = os.times(), time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-c", _AUDIT, "audit", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        },
    )
    wall = time.perf_counter() - start
    _reap_all(time.monotonic() + 30)
    after = os.times()
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    loaded = [line for line in run.stderr.splitlines() if line.startswith("LOADED")]
    if not loaded:
        raise RuntimeError(f"the audit failed: {run.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu, "report": run.stdout, "loaded": loaded[-1].split()[1:]}


def warm_cache() -> None:
    """Export the ONNX model now if it is not cached yet (outside every timer)."""
    from aem.compare import TextEmbedder

    TextEmbedder().encode(["warm the ONNX cache before timing"])


def measure(runs: int) -> dict[str, Any]:
    """Median wall and CPU seconds per backend and worker mode, runs interleaved."""
    counted = _become_subreaper()
    modes = {"--workers 1": ["--workers", "1"], "default workers": []}
    with tempfile.TemporaryDirectory() as folder:
        trace = one_session(Path(folder))
        seen: dict[str, dict[str, list[dict[str, Any]]]] = {
            mode: {b: [] for b in BACKENDS} for mode in modes
        }
        for _ in range(runs):
            for mode, workers in modes.items():
                for backend, extra in BACKENDS.items():
                    seen[mode][backend].append(audit_once(trace, extra, workers))
    out: dict[str, Any] = {"cpu_counts_workers": counted, "runs": runs, "modes": {}}
    for mode, by in seen.items():
        figures = {
            backend: {
                "wall_s": statistics.median(r["wall"] for r in results),
                "cpu_s": statistics.median(r["cpu"] for r in results),
                "loaded": results[-1]["loaded"],
            }
            for backend, results in by.items()
        }
        base, new = figures["torch (before)"], figures["default"]
        reports = {r["report"] for results in by.values() for r in results}
        out["modes"][mode] = {
            "backends": figures,
            "wall_ratio": new["wall_s"] / base["wall_s"],
            "cpu_ratio": new["cpu_s"] / base["cpu_s"],
            "reports_identical": len(reports) == 1,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="cold audits per backend and mode")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}")
    warm_cache()
    report = measure(args.runs)
    for mode, figures in report["modes"].items():
        for backend, f in figures["backends"].items():
            print(
                f"{mode:16} {backend:15} wall {f['wall_s']:5.1f} s  CPU {f['cpu_s']:5.1f} s  "
                f"imported: {', '.join(f['loaded']) or '-'}"
            )
        print(
            f"{mode:16} default / torch: wall {figures['wall_ratio']:.2f}x, CPU "
            f"{figures['cpu_ratio']:.2f}x; reports identical: {figures['reports_identical']}"
        )
    if not report["cpu_counts_workers"]:
        print("(not Linux: CPU with the default workers misses the workers' own time)")
    write_report("audit-cold-start", report)
    ok = all(f["reports_identical"] for f in report["modes"].values())
    default_loaded = [f["backends"]["default"]["loaded"] for f in report["modes"].values()]
    return 0 if ok and not any("torch" in loaded for loaded in default_loaded) else 1


if __name__ == "__main__":
    raise SystemExit(main())
