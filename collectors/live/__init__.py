"""Live mode (``aem serve``): OTLP receivers, durable spool, session pipeline, operations."""
