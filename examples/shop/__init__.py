"""A tiny instrumented shop agent and its dataset, for ``aem test run --agent``."""
