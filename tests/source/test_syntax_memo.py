"""The node helpers' memos (syntax._span's last index, syntax._functions) answer for the tree a node is in,
also when two trees hold the same text and are asked about in turn."""

from cudalens.source import syntax as syn

TEXT = b"__global__ void k(int *a) { a[threadIdx.x] = 1; }\nvoid h() { k<<<1, 32>>>(0); }\n"


def test_nodes_of_answers_from_the_nodes_own_tree() -> None:
    a, b = syn.parse_tree(TEXT), syn.parse_tree(TEXT)
    for tree, other in ((a, b), (b, a), (a, b)):
        calls = syn.nodes_of(tree.root_node, "call_expression")
        assert calls and all(c in syn.walk(tree.root_node) for c in calls)
        assert not any(c in list(syn.walk(other.root_node)) for c in calls)
        # a node deep in the tree: its subtree from its own tree's index
        ident = syn.nodes_of(calls[0], "identifier")
        assert [syn.text(n) for n in ident] == [syn.text(n) for n in syn.iter_nodes(calls[0]) if n.type == "identifier"]


def test_functions_per_tree_and_a_fresh_list_each_time() -> None:
    a, b = syn.parse_tree(TEXT), syn.parse_tree(TEXT + b"void g() {}\n")
    fa, fb = syn.functions(a), syn.functions(b)
    assert [f.name for f in fa] == ["k", "h"] and [f.name for f in fb] == ["k", "h", "g"]
    assert [(f.name, f.space) for f in fa] == [("k", "global"), ("h", "host")]
    fa.append(fb[0])  # the caller's list is its own: the memo is not changed
    assert [f.name for f in syn.functions(a)] == ["k", "h"]
    assert all(f.node in list(syn.walk(a.root_node)) for f in syn.functions(a))


def test_the_callers_one_query_finds_what_the_index_finds() -> None:
    from cudalens.source import callers

    text = (b"#define CHECK(x) check(x)\ntemplate <int N> __global__ void k(float *a) { a[0] = f(g(1)); }\n"
            b"__device__ __host__ int f(int x) { return x; }\n"
            b"int main() { k<2><<<1, 1>>>(0); CHECK(cudaGetLastError()); if (h(1)) { h(h(2)); } return 0; }\n")
    tree = syn.parse_tree(text)
    queried, indexed = callers._tree(tree.root_node, False), callers._tree(tree.root_node, True)
    assert queried == indexed
    pairs = queried.functions
    assert [fn for fn, _calls in pairs] == syn.functions(tree)
    assert [f.name for f, _calls in pairs] == ["k", "f", "main"]
    for fn, calls in pairs:
        assert calls == syn.calls(fn.node) == callers._found(fn.node, "call_expression")
        assert callers._found(fn.node, "call_expression", indexed=True) == calls
    assert list(queried.macros) == syn.nodes_of(tree.root_node, "preproc_function_def")
    assert callers.sites_in(tree, {"h"}) == callers.sites_in(tree, {"h"}, indexed=True)
    assert callers.error_checks(tree) == callers.error_checks(tree, indexed=True)


def test_call_names_kept_per_index_node_answer_as_computed() -> None:
    text = b"void h() { std::pow(2.0, 3.0); k<<<1, 32>>>(0); a.b.f(1); cg::sync(g); t<int>(x); (*fp)(2); }\n"
    a, b = syn.parse_tree(text), syn.parse_tree(text.replace(b"pow", b"exp"))
    want_a = ["pow", "k", "f", "sync", "t", "(*fp)"]
    for tree, want in ((a, want_a), (b, ["exp", *want_a[1:]]), (a, want_a)):
        calls = syn.calls(tree.root_node)
        for _ in range(2):  # computed, then kept
            assert [syn.call_name(c) for c in calls] == want == [syn._call_name(c) for c in calls]
            assert [syn.is_launch(c) for c in calls] == [False, True, False, False, False, False]
        fresh = [c.parent.named_children[0]
 for c in calls]  # node objects the index does not hold: computed each time
        assert [syn.call_name(c) for c in fresh] == want
