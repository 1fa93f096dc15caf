"""Live mode (``aem serve``): OTLP receivers, durable spool, session pipeline, sinks.

An application of the library, like ``aem.audit``: spans arrive through the receivers,
are spooled before they are acknowledged, assembled by ``collectors.assembler`` into
closed sessions, and handed to :class:`aem.evaluate.Evaluator` — the same path the audit
takes — before the verdicts leave through the durable outbox to the sinks.
"""
