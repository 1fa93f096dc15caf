"""Validation and totalling time of a scorecard over a long pipeline
(`python -m bench.scorecards.run`)."""
