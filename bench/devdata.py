"""Where the development sets are: the folder ``AEM_DEV_DATA`` names (one sub-folder per
set), never a path built into the code.

Why an environment variable: the development data does not ship with AEM, and each
machine keeps it somewhere else; a bench that needs a set says which variable to set
instead of guessing a folder next to the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "AEM_DEV_DATA"


def dev_root() -> Path | None:
    """The folder of the development sets, when ``AEM_DEV_DATA`` names one."""
    root = os.environ.get(ENV)
    return Path(root) if root else None


def dev_set(name: str) -> Path:
    """One development set's folder (it may not exist: callers say what is missing)."""
    root = dev_root()
    return (root / name) if root is not None else Path(f"${ENV}") / name
