"""Dataset tests: cases + checks, runs and their store (docs/tests.md); see ``api``."""
