"""The optimal pairing of two lists by a cost matrix, with SciPy imported on first use.

Why a module of its own: ``scipy.optimize`` costs about a third of a second to import, and
most audits never need an assignment (in-order tool calls take the matcher's one-pass
path; few answers carry lists of structured values). Importing it where the first matrix
is solved keeps that cost out of every short audit's start, for the three places that
pair lists (tool calls, their argument costs, structured values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

Indices = np.ndarray[Any, np.dtype[np.intp]]


def linear_sum_assignment(cost: np.ndarray[Any, Any]) -> tuple[Indices, Indices]:
    """Rows and columns of the minimum-cost pairing (SciPy's, imported here on first use)."""
    from scipy.optimize import linear_sum_assignment as solve

    rows, cols = solve(cost)
    return rows, cols
