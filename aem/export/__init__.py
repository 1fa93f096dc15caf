"""Helpers an instrumented agent imports to record its traces for AEM (no Collector needed)."""
