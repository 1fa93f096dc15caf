"""How large one session may grow before it is cut, by default: written once.

Why a module of its own: the assembler (spans), session building (turns) and the
``[assembly]`` settings all need the same defaults, and the settings must not import the
assembler or session building to learn them.
"""

from __future__ import annotations

# Spans held for one session; the rest are counted, not kept, and the session is cut.
DEFAULT_MAX_SESSION_SPANS = 100_000
# Turns evaluated in one session; a session with more keeps its first turns and is cut.
DEFAULT_MAX_SESSION_TURNS = 20_000
# Files have no wall clock: a session whose root span has ended is closed after this many
# further spans without one of its own.
DEFAULT_IDLE_SPANS = 20_000
