"""expr.too_big, which skips a stack entry per leaf, answers as the walk that counted every node as it
popped it (kept here as the reference) on generated expressions: shallow, deep, large, shared."""

from hypothesis import given, settings
from hypothesis import strategies as st

from cudalens.source import expr as E


def _reference(e: E.Expr) -> bool:
    stack = [(e, 1)]
    size = 0
    while stack:
        x, d = stack.pop()
        size += 1
        if size > E.MAX_SIZE or d > E.MAX_DEPTH:
            return True
        tag = x[0]
        if tag == "b":
            stack.append((x[2], d + 1))
            stack.append((x[3], d + 1))
        elif tag == "u":
            stack.append((x[2], d + 1))
        elif tag == "t":
            stack.extend(((x[1], d + 1), (x[2], d + 1), (x[3], d + 1)))
        elif tag == "f":
            stack.extend((a, d + 1) for a in x[2])
    return False


_LEAVES = st.sampled_from([("n", 1), ("v", "x"), ("x", "load a")])


def _grow(kids: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.tuples(st.just("b"), st.just("+"), kids, kids), st.tuples(st.just("u"), st.just("-"), kids),
                     st.tuples(st.just("t"), kids, kids, kids),
                     st.tuples(st.just("f"), st.just("min"), st.lists(kids, max_size=3).map(tuple)))


@settings(max_examples=300, deadline=None)
@given(st.recursive(_LEAVES, _grow, max_leaves=60))
def test_too_big_as_the_reference(e: E.Expr) -> None:
    assert E.too_big(e) == _reference(e)


def test_deep_large_and_shared_expressions() -> None:
    chain: E.Expr = ("v", "x")
    for depth in range(1, 130):
        chain = ("u", "-", chain)
        assert E.too_big(chain) == _reference(chain) == (depth + 1 > E.MAX_DEPTH)
    doubled: E.Expr = ("v", "x")  # x + x, doubled 13 times: a DAG whose tree has up to 2**13 leaves
    for _ in range(13):
        doubled = ("b", "+", doubled, doubled)
        assert E.too_big(doubled) == _reference(doubled)
    wide: E.Expr = ("f", "max", tuple(("n", i) for i in range(E.MAX_SIZE - 1)))
    assert not E.too_big(wide) and E.too_big(("u", "-", ("u", "-", wide))) and not _reference(wide)
    for e in (("n", 1), ("v", "y"), ("x", "call f"), ("f", "min", ())):
        assert E.too_big(e) == _reference(e)
