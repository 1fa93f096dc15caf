"""``aem.export.otlp_json``, kept so that code written against it goes on working.

The exporter moved to the ``aem-record`` distribution (``aem_record``), which an agent
installs without the evaluator: recording needs only the OpenTelemetry SDK. AEM depends on
``aem-record``, so this path imports the very same objects; new code imports
``aem_record``.
"""

from aem_record import OtlpJsonFileExporter, otlp_json

__all__ = ["OtlpJsonFileExporter", "otlp_json"]
