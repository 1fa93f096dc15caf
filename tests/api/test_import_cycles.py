"""No import cycle anywhere in AEM, at module level or inside a function.

Why a test of its own: import-linter's layers contract checks the direction between the
layers it names, but two modules of one package may still import each other (a lazy
import inside a function hides such a cycle until the function runs, in whichever order
the process happened to load them). grimp, import-linter's own graph builder, reads every
import statement, function bodies included, and imports under ``TYPE_CHECKING`` too: one
never runs, but a module annotated with a type from a module that imports it is a circle
all the same (``aem.foundation.model`` once held the ``aem.graph.TurnGraph`` built from its turns).
"""

from __future__ import annotations

from pathlib import Path

import grimp
import networkx as nx


def import_cycles(*packages: str) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a loop."""
    graph = grimp.build_graph(*packages, exclude_type_checking_imports=False)
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    assert len(edges) > 1, f"no modules found in {packages}"
    return sorted(sorted(g) for g in nx.strongly_connected_components(edges) if len(g) > 1)


def test_no_module_of_aem_takes_part_in_an_import_cycle() -> None:
    assert import_cycles("aem", "collectors") == []


def test_a_cycle_in_a_function_or_under_type_checking_is_found(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "lazyloop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from lazyloop import b\n")
    (package / "b.py").write_text(
        "from lazyloop import c\n\ndef later():\n    from lazyloop import a\n    return a\n"
    )
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lazyloop import b\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # a <-> b through a function body is a cycle; so is b <-> c under TYPE_CHECKING alone.
    assert import_cycles("lazyloop") == [["lazyloop.a", "lazyloop.b", "lazyloop.c"]]
