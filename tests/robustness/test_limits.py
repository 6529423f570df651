"""The per-file budget and the nesting limit turn what would be a hang or a crash into a note."""

from __future__ import annotations

from cudalens.access.model import analyze_model
from cudalens.source.limits import MAX_NESTING, Budget, BudgetExceeded, deep_points
from cudalens.source.parse import parse_file, parse_tree

KERNELS = "".join(
    f"__global__ void k{i}(float *a, int n) {{ int t = blockIdx.x * blockDim.x + threadIdx.x; "
    f"if (t < n) a[t * {i + 1}] = 1.0f; }}\n" for i in range(3))


def test_spent_time_budget_is_a_note_in_the_front_end(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(KERNELS)
    model = parse_file(f, budget=Budget(seconds=0))
    assert len(model.kernels) == 3
    for k in model.kernels:
        assert not k.accesses
        assert any("unmodelled: the rest of the kernel (time budget of 0 s spent)" in p for p in k.problems)


def test_spent_budget_is_a_note_in_the_access_model(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(KERNELS)
    model = analyze_model(parse_file(f), budget=Budget(seconds=0))
    for k in model.kernels:
        assert any("unmodelled: access model (time budget of 0 s spent)" in p for p in k.problems)
        assert all(a.pattern is None for a in k.accesses)  # left unevaluated, not guessed
    full = analyze_model(parse_file(f))
    assert all(a.pattern for k in full.kernels for a in k.accesses)


def test_memory_budget_is_checked():
    b = Budget(seconds=60, memory_mb=-1)  # any growth (even none) exceeds a negative allowance
    try:
        for _ in range(200):
            b.check()
    except BudgetExceeded as exc:
        assert "memory budget" in exc.what
    else:
        raise AssertionError("a spent memory budget was not noticed")


def test_deep_points_finds_only_what_is_too_deep():
    shallow = parse_tree(b"int f() { return ((((1)))); }\n")
    assert deep_points(shallow.root_node) == []
    deep = parse_tree(b"int f() {\n  return " + b"(" * (MAX_NESTING + 10) + b"1" + b")" * (MAX_NESTING + 10) + b";\n}\n")
    points = deep_points(deep.root_node)
    assert points and all(line == 2 for _b, line in points)


def _every_deep_point(root, limit):
    """deep_points as a walk of every node (no subtree skipped): what the pruned walk must equal."""
    out, cursor, depth = [], root.walk(), 0
    while True:
        if depth > limit:
            out.append((cursor.node.start_byte, cursor.node.start_point[0] + 1))
        elif cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out
            depth -= 1


def test_deep_points_skips_only_subtrees_that_cannot_be_too_deep():
    sources = [KERNELS.encode(), b"int x;", b"a;", b"int f() { return -(-(-(!x))); }"] + [
        (f"int f() {{ return {'(' * k}1{')' * k}; }}\nint g(int a) {{ return {' + '.join(['a'] * k)}; }}\n"
         f"struct S {{ int m() {{ {'{' * k}{'}' * k} return 0; }} }};\n").encode() for k in (3, 60, 199, 200, 201, 260)]
    for text in sources:
        root = parse_tree(text).root_node
        for limit in (*range(40), 50, 100, MAX_NESTING):
            assert deep_points(root, limit) == _every_deep_point(root, limit), (limit, text[:40])
