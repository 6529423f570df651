"""The SASS batch of compile-ahead (issue #29): a group's cubins disassembled together, each member
getting its own; members that do not arrive leave; a failed batch leaves each member to its own call."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cudalens.compiled import sass_batch, sass_elf


def _members(batch: sass_batch.SassBatch, plans: list[str | None], slot: threading.Semaphore | None) -> list:
    """One thread per plan: a cubin name arrives with it, None leaves; their results in order."""
    got: list = [None] * len(plans)

    def member(i: int, cubin: str | None) -> None:
        place = batch.member()
        if slot is not None:
            slot.acquire()
        try:
            if cubin is not None:
                got[i] = place.disassemble("nvdisasm", Path(cubin), "9.0", f"src{i}.cu", {})
        finally:
            place.leave()
            if slot is not None:
                slot.release()

    threads = [threading.Thread(target=member, args=(i, c), daemon=True) for i, c in enumerate(plans)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
        assert not t.is_alive(), "a member is still waiting: the batch never fired"
    return got


def test_one_call_serves_every_member_that_arrived(monkeypatch):
    calls: list[list] = []

    def many(nvdisasm, cc, items, env=None):
        calls.append(list(items))
        return [{"k": f"sass of {Path(c).name} for {s}"} for c, s in items]

    monkeypatch.setattr(sass_elf, "disassemble_many", many)
    slot = threading.Semaphore(1)  # one compile at a time: a waiting member must give its slot back
    got = _members(sass_batch.SassBatch(3, slot=slot), ["a.cubin", None, "c.cubin"], slot)
    assert len(calls) == 1 and sorted(Path(c).name for c, _ in calls[0]) == ["a.cubin", "c.cubin"]
    assert got[0] == {"k": "sass of a.cubin for src0.cu"} and got[2] == {"k": "sass of c.cubin for src2.cu"}
    assert got[1] is None


def test_parts_split_the_batch_into_calls_at_once(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(sass_elf, "disassemble_many",
                        lambda nvdisasm, cc, items, env=None: calls.append(len(items)) or [{"c": str(c)} for c, _ in items])
    got = _members(sass_batch.SassBatch(4, parts=2), ["a", "b", "c", "d"], None)
    assert sorted(calls) == [2, 2]
    assert [g["c"] for g in got] == ["a", "b", "c", "d"]


def test_a_failed_batch_leaves_each_member_to_its_own_call(monkeypatch):
    def broken(*_a, **_k):
        raise RuntimeError("batch failed")

    monkeypatch.setattr(sass_elf, "disassemble_many", broken)
    monkeypatch.setattr(sass_batch, "disassemble_one", lambda nvdisasm, cubin, cc, source, env: {"own": cubin.name})
    got = _members(sass_batch.SassBatch(2), ["a.cubin", "b.cubin"], None)
    assert got == [{"own": "a.cubin"}, {"own": "b.cubin"}]


def test_a_member_arriving_after_the_batch_ran_makes_its_own_call(monkeypatch):
    monkeypatch.setattr(sass_elf, "disassemble_many", lambda nvdisasm, cc, items, env=None: [{"batch": 1} for _ in items])
    monkeypatch.setattr(sass_batch, "disassemble_one", lambda nvdisasm, cubin, cc, source, env: {"own": cubin.name})
    batch = sass_batch.SassBatch(1)
    assert _members(batch, ["a.cubin"], None) == [{"batch": 1}]
    assert _members(batch, ["late.cubin"], None) == [{"own": "late.cubin"}]


@pytest.mark.parametrize("members", [0, 2])
def test_a_batch_nobody_arrives_at_makes_no_call(monkeypatch, members):
    monkeypatch.setattr(sass_elf, "disassemble_many", lambda *a, **k: pytest.fail("called"))
    _members(sass_batch.SassBatch(members), [None] * members, None)
