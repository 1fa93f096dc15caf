"""The floors as folders: the foundation modules live in ``aem.foundation`` and the
applications over runs in ``aem.runs``; the old import paths still give the very same
module for one release, with a DeprecationWarning naming the new one."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import aem

AEM = Path(aem.__file__).parent
ROOT = AEM.parent


@pytest.mark.parametrize(("old", "new"), sorted(aem._MOVED.items()))
def test_an_old_path_gives_the_same_module_and_names_the_new_one(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=re.escape(new)):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_the_hall_holds_at_most_sixteen_loose_modules() -> None:
    loose = sorted(p.stem for p in AEM.glob("*.py") if p.stem != "__init__")
    assert len(loose) <= 16, loose
    assert not {old.rsplit(".", 1)[1] for old in aem._MOVED} & set(loose)


def test_nothing_in_the_tree_imports_an_old_path() -> None:
    """The shim is for users' code: AEM's own code, tests and benches use the new paths."""
    old = "|".join(re.escape(name) for name in aem._MOVED)
    pattern = re.compile(rf"^\s*(?:from|import)\s+(?:{old})\b", re.M)
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("aem", "collectors", "tests", "bench", "scripts")
        for path in (ROOT / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
