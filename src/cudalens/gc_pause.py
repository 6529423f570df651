"""Python's cycle collector paused over work that makes many objects and no garbage cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside, its previous state restored after. For work that allocates many
    objects and frees them by reference counting (the lane machine's short-lived values; the stored
    analyses a warm run unpickles), where the collector's passes would walk them all for nothing.

    On the way out the objects still young (those made inside) join the oldest generation
    (``gc.freeze`` then ``gc.unfreeze``: two list splices) instead of staying young: re-enabled, the
    collector would otherwise walk every one still alive (a unit's parsed PTX, its decoded steps, its
    results: about 100k objects, 30 ms for cuda-samples' reduction) at its next allocation, although
    they are freed by reference counting soon after. A cycle among them is still found, by a full
    collection. Where the process has frozen objects of its own (a server that forks, say), they stay
    frozen: the objects made inside are then left young."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:  # unfreeze would thaw what another part of the process froze
                gc.freeze()
                gc.unfreeze()
            gc.enable()
