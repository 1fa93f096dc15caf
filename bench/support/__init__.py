"""Perturbation benchmark of the support check (`python -m bench.support.run`)."""
