"""Where AEM used to keep its recording helpers; they live in ``aem_record`` now.

``aem_record`` is a distribution of its own (``aem-record``) so that an instrumented agent
records its traces with only the OpenTelemetry SDK installed; ``aem.export.otlp_json``
re-exports it for code that imports the old path.
"""
