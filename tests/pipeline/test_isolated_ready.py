"""run_limited's ``ready``: a file's worker starts once its input is there (its unit compiled ahead),
in the order given."""

from __future__ import annotations

from cudalens.pipeline.isolated import FileLimits, run_limited


def test_workers_start_in_order_once_ready():
    asked: list[tuple[str, bool]] = []
    polls = {"a": 0}

    def ready(item: str) -> bool:
        polls[item] = polls.get(item, 0) + 1
        ok = item != "a" or polls["a"] > 3
        asked.append((item, ok))
        return ok

    got = run_limited(["a", "b"], lambda item: item.upper(), FileLimits(seconds=30), jobs=2, ready=ready)
    assert got == {"a": "A", "b": "B"}
    first_b = next(k for k, (item, _ok) in enumerate(asked) if item == "b")
    assert asked[first_b - 1] == ("a", True)  # b waited behind a, though b was ready
    assert [ok for item, ok in asked if item == "a"][:4] == [False, False, False, True]
