"""Record an agent's traces for AEM with only the OpenTelemetry SDK installed.

A distribution of its own (``aem-record``) because the agent's runtime is not the
evaluator's: what the agent imports to record must not bring torch, sentence-transformers
or any of AEM with it. AEM depends on this package and reads what it writes.
"""

from aem_record.otlp_json import OtlpJsonFileExporter, otlp_json

__all__ = ["OtlpJsonFileExporter", "otlp_json"]
