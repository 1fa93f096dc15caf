"""The cyclic garbage collector paused while one session is built and evaluated.

Why: building and evaluating a session allocates hundreds of thousands of objects that
all stay alive until its report is made (turns, observations, extracted values, metric
results). Each allocation burst makes the collector scan the young objects, and every
25 % of heap growth it scans the whole heap: on a 10 k-span session its full
collections cost as much as a third of the CPU time, and they grow with the session. That
work finds next to nothing: the session's objects live until its report is made and
are then freed by reference counting, which the pause leaves untouched (the turn graph
and the views networkx caches on it form a cycle, collected once the pause ends). So
memory stays what the session holds; the outermost pause gives the collector back as
it was.

>>> import gc
>>> with cyclic_gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (also as a decorator); nested pauses
    and a collector the caller disabled are left as they are."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
