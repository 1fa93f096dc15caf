"""AEM inside other evaluation frameworks: their traces in, AEM's per-turn verdicts out.

Each adapter is an optional extra (``pip install aem[mlflow]``): its framework is imported
only when the adapter is built, never when ``aem`` starts.
"""
