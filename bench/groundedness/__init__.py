"""Groundedness benchmark: the embedded default's accuracy on labelled claims."""
