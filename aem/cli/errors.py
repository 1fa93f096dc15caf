"""The one place that turns an exception into an exit code, and the ``error:`` line.

Why here: every command shares the exit-code table (:mod:`aem.cli.exit_codes`), so an
exception must map to the same code whichever command raised it: the user's input or
set-up wrong is :attr:`ExitCode.BAD_INPUT`; anything else is AEM's own
:attr:`ExitCode.INTERNAL_ERROR`, one line and a hint to rerun with ``--debug``.
"""

from __future__ import annotations

import os
from typing import Any, NoReturn

import typer  # noqa: TID251
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup  # noqa: TID251

from aem.cli.exit_codes import ExitCode, exit_code_epilog

DEBUG_KEY = "aem.debug"
DEBUG_ENV = "AEM_DEBUG"


def err_console() -> Console:
    """stderr, never wrapped: an error line cut at 80 columns (under ``make``, in CI)
    splits a file name or a key, so it cannot be copied back into a command."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


def fail(message: object, code: ExitCode = ExitCode.BAD_INPUT) -> NoReturn:
    """Print ``error: <message>`` (no markup read from it) and exit with ``code``."""
    err_console().print(f"[red]error:[/] {escape(str(message))}")
    raise typer.Exit(code)


def user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the input or the set-up is wrong (exit 2), not that AEM is.

    Imported when an error happens, not at start-up: most are in modules a command
    may never load.
    """
    from pydantic import ValidationError

    from aem.cases import CasesError
    from aem.config import ConfigError
    from aem.foundation.plugins import PluginError, UnknownPlugin
    from aem.judges.base import JudgeConfigError
    from aem.store import StoreError

    return (
        ConfigError,
        CasesError,
        JudgeConfigError,
        PluginError,
        UnknownPlugin,
        StoreError,
        ValidationError,
        OSError,
    )


def debug_enabled(ctx: typer.Context | None) -> bool:
    """``aem --debug …`` or ``AEM_DEBUG=1``: let tracebacks through."""
    if os.environ.get(DEBUG_ENV, "").strip() not in ("", "0"):
        return True
    return bool(ctx is not None and ctx.meta.get(DEBUG_KEY))


class AemGroup(TyperGroup):
    """The root group: plain help text ending in the exit-code table for every command,
    and errors as exit codes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)
        exit_codes_in_help(self)

    def invoke(self, ctx: Any) -> Any:  # typer's vendored click Context is private
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # usage errors and deliberate exits keep their own codes
        except Exception as exc:
            if debug_enabled(ctx):
                raise
            _report(exc)


def _report(exc: Exception) -> NoReturn:
    """One line on stderr and the exit code the exception's kind calls for."""
    if isinstance(exc, user_errors()):
        fail(_one_line(exc), ExitCode.BAD_INPUT)
    fail(
        f"internal error: {type(exc).__name__}: {_one_line(exc)} "
        f"(rerun with --debug for the traceback)",
        ExitCode.INTERNAL_ERROR,
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def plain_help(command: object) -> None:
    """Help without rich markup, for ``command`` and everything under it.

    Why: rich markup reads ``[serve]`` in a help text as a style tag and drops it, and
    the rich layout prints every flag with a ``<bool>`` type as if it took a value.
    """
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def exit_codes_in_help(command: object) -> None:
    """The exit-code table as the closing paragraph of the help of ``command`` and of
    everything under it.

    Why here and not per command: a command added later gets the table without anyone
    remembering to add it, and every help shows the same table.
    """
    if hasattr(command, "epilog"):
        command.epilog = exit_code_epilog()
    for sub in getattr(command, "commands", {}).values():
        exit_codes_in_help(sub)
