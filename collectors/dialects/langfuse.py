"""Langfuse: only its session attribute, ``langfuse.session.id``.

Spans of instrumentation libraries exported to Langfuse keep their own dialect (GenAI,
OpenInference, Vercel AI), which those modules read; what Langfuse adds that AEM needs is
the conversation it groups them into. Its own ``langfuse.observation.*`` attributes, set
by hand-written observations, are not read yet.
"""

from __future__ import annotations

from collectors.dialects.protocol import BaseDialect, SessionKey


class LangfuseDialect(BaseDialect):
    """Claims no span; contributes the fourth session key."""

    name = "langfuse"
    band = "fallback"
    session_keys = (SessionKey("langfuse.session.id", 30),)


dialect = LangfuseDialect()
