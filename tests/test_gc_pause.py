"""gc_pause.collector_paused: the collector is off inside and restored after; what was made inside joins the
oldest generation, and objects the process froze itself stay frozen."""

from __future__ import annotations

import gc

from cudalens.gc_pause import collector_paused


class _Made:
    pass


def test_what_is_made_inside_leaves_old_and_the_collector_is_back_on() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        made = _Made()
    assert gc.isenabled()
    assert any(o is made for o in gc.get_objects(generation=2))


def test_objects_the_process_froze_stay_frozen() -> None:
    kept = _Made()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            _Made()
        assert gc.get_freeze_count() == frozen and gc.isenabled()  # not thawed by the pause
        assert not any(o is kept for o in gc.get_objects())  # still in the permanent generation
    finally:
        gc.unfreeze()
