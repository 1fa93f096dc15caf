"""``aem serve``: load settings, run the live server until SIGTERM/SIGINT, drain, exit.

Settings come from the ``[serve]`` table of the AEM TOML config, then ``serve.key=value``
overrides; every other override goes to the evaluation config (``AemConfig``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from aem.config import apply_override
from aem.foundation.provenance import provenance_by_metric
from aem.metrics.registry import resolve_metrics
from aem.serve.ops import setup_logging
from aem.serve.settings import ServeSettings, UnusableSetting, load_serve_config
from aem.settings import read_toml

log = logging.getLogger("aem.serve")

PREFIX = "serve."


def load_settings(config_path: Path | None, overrides: list[str]) -> ServeSettings:
    """``[serve]`` from the TOML file, then ``serve.*`` overrides; validated once here."""
    data: dict[str, Any] = {}
    if config_path is not None:
        data = dict(read_toml(Path(config_path)).get("serve", {}))
    for item in overrides:
        key, _, raw = item.partition("=")
        if key.strip().startswith(PREFIX):
            apply_override(data, f"{key.strip()[len(PREFIX) :]}={raw.strip()}")
    return ServeSettings.model_validate(data)


def serve_command(config_path: Path | None, overrides: list[str], cases_path: Path | None) -> int:
    """Run ``aem serve``; returns the process exit code (0 after a clean drain)."""
    try:
        config = load_serve_config(config_path, overrides)  # the file, read once
        settings = config.serve
    except (ValidationError, ValueError, OSError) as exc:
        print(f"aem serve: invalid configuration: {exc}", file=sys.stderr)
        return 2
    setup_logging(settings.log_level)
    from aem.serve.server import LiveServer, build_evaluate

    cases = None
    if cases_path is not None:
        from aem.cases import load_cases

        cases = load_cases(cases_path)
    evaluate = build_evaluate(settings, cases, config)
    try:
        server = LiveServer(
            settings,
            evaluate=evaluate,
            assembly=config.assembly,
            provenance=provenance_by_metric(resolve_metrics(config), config.judges),
        )
        server.start()
    except (UnusableSetting, OSError) as exc:
        # One line, no traceback, exit 2 (the set-up is the operator's to fix): a port in
        # use, a spool that cannot be opened, a TLS key that does not load — the setting
        # named. The worker processes started for evaluation go too.
        close_pool = getattr(evaluate, "close", None)
        if close_pool is not None:
            close_pool()
        # Logged, not printed: every line on stderr is a JSON record (log shippers parse it).
        # Then leave at once, as after a stop: threads the failed start left behind would
        # otherwise write plain "Exception ignored …" lines during interpreter teardown.
        log.error("cannot start: %s", exc, extra={"error": str(exc)})
        _leave(2)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal received", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.wait(1.0):
        pass
    server.stop()
    # Everything the server owns is closed by now (spool, outbox, sinks, worker
    # processes): leave at once. Interpreter teardown is not bounded — freeing a loaded
    # model's heap took seconds on a busy machine, and an evaluation that outlived the
    # drain (its session stays in the spool) can crash it in native code (torch:
    # "terminate called") — and the documented shutdown bound must hold.
    _leave(0)


def _leave(code: int) -> NoReturn:
    """Exit with ``code`` now: logs flushed, no interpreter teardown."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
