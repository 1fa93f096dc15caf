"""The exit codes of every ``aem`` command: one table, printed at the end of every ``--help``.

Why one table: a script or a CI job branches on the code ("the agent has root causes" vs
"the command was misused" vs "AEM itself broke") without parsing text, so a code must
mean the same thing whichever command returned it. Each command's help shows this table
(:func:`exit_code_epilog`), so the text cannot drift from the codes the commands use.

Input skipped on the way is not a code of its own: ``aem audit`` reports what it could
not read on stderr and exits with the verdicts' code; ``aem audit --strict`` makes it 2.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """A process exit code and the one line that says what it means."""

    meaning: str

    def __new__(cls, value: int, meaning: str) -> ExitCode:
        member = int.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    OK = 0, "nothing found: no root causes, every gate met"
    FOUND = 1, "found: root causes, a failed gate or check, a regression, diverged runs"
    BAD_INPUT = 2, "bad usage or input, invalid config, cases or plug-in (--strict: skipped input)"
    INTERNAL_ERROR = 3, "internal error (rerun with --debug for the traceback)"
    NOT_EVALUABLE = 4, "not evaluable (aem test): mostly judge errors, nothing passed or failed"


def exit_code_epilog() -> str:
    """The table as the help's closing paragraph, one code a line (``\\b``: click keeps
    the lines as written instead of rewrapping them into one paragraph)."""
    lines = ["\b", "Exit codes:"]
    lines += [f"  {code.value}  {code.meaning}" for code in ExitCode]
    return "\n".join(lines)


__all__ = ["ExitCode", "exit_code_epilog"]
