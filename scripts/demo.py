"""``make demo`` after setup: load the embedding model, audit the samples, say where the
report is — each step announced as it starts and timed when it ends.

Why steps: the demo was silent for three minutes on a fresh machine (the model's first
load writes its ONNX export), and a new user could not tell a slow step from a hung one.
Loading the model here is not done twice: the audit reuses the loaded files and the
export on disk. The audit's own output (the tables, the ranking) is printed as it is.

    python -m scripts.demo [--out-dir build/demo]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

SAMPLES = Path("sample_traces")
# The first step, setting up .venv, is the Makefile's: this script runs inside it.
STEPS = 4


def step(number: int, text: str) -> float:
    """Announce a step now (flushed: make pipes our output); return its start time."""
    print(f"make demo [{number}/{STEPS}] {text}", flush=True)
    return time.monotonic()


def done(started: float, text: str = "done") -> None:
    print(f"  {text} ({time.monotonic() - started:.0f} s)", flush=True)


def load_model() -> None:
    """The embedding model AEM compares texts with, loaded as the audit loads it."""
    from aem.compare.embedder import TextEmbedder
    from aem.config import load_config

    started = step(
        2,
        "loading the embedding model AEM compares texts with (offline, from the installed "
        "wheel; its first load on a machine exports it to ONNX, a minute or more) …",
    )
    embedder = TextEmbedder.from_settings(load_config(None, []).compare)
    embedder.model  # noqa: B018  # the load is the point
    done(started, f"loaded: {embedder.precision}")


def audit(out_dir: Path) -> int:
    """``aem audit`` on the samples, its view printed as it comes; its exit code."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = step(
        3,
        f"auditing the {len(list(SAMPLES.glob('*.jsonl')))} sample trace files in {SAMPLES}/ "
        "with their cases and failure taxonomy …",
    )
    command = [
        str(Path(sys.executable).with_name("aem")),
        "audit",
        f"{SAMPLES}/",
        "--cases",
        str(SAMPLES / "cases.jsonl"),
        "--taxonomy",
        str(SAMPLES / "taxonomy.toml"),
        "--html",
        str(out_dir / "report.html"),
        "--out",
        str(out_dir / "report.json"),
    ]
    code = subprocess.run(command, check=False).returncode
    done(started, f"exit code {code} ({'root causes found' if code == 1 else 'see above'})")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path("build/demo"))
    options = parser.parse_args(argv)
    load_model()
    code = audit(options.out_dir)
    if code > 1:  # 1 means root causes were found: what the demo shows
        return code
    step(4, "where the report is:")
    print(f"  {options.out_dir / 'report.html'}  (open in a browser: one self-contained page)")
    print(f"  {options.out_dir / 'report.json'}  (the versioned JSON report)")
    print("  again, on your own traces: .venv/bin/aem audit PATH (see README.md)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
