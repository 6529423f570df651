"""Python's cycle collector paused over work that makes many objects and no garbage cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside, its previous state restored after. For work that allocates many
    objects and frees them by reference counting (the lane machine's short-lived values; the stored
    analyses a warm run unpickles), where the collector's passes would walk them all for nothing."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
