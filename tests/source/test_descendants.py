"""syntax.descendants, the index's answer for a walk of a subtree's named nodes, finds exactly what the walk
finds (the kernel walk reads it where it walked the nodes itself), zero-width nodes at a subtree's end
included; syntax.nodes_of stops before those."""

from cudalens.source import syntax as syn

TEXT = (b"__global__ void k(float *a, int n) {\n  for (int i = 0; i < n; i += 2) { a[i] = *(a + i) + b[i][n]; n++; }\n"
        b"  struct S { __shared__ int x; };\n  auto f = [&](int j) { return a[j]; };\n}\n"
        b"void h(int m) { int q = m * (m + ); k<<<1, 32>>>(0, q); }\n")  # (`m + )`: a missing identifier ends `m + `)
TYPES = [("identifier",), ("assignment_expression", "update_expression"), ("subscript_expression", "pointer_expression"),
         ("struct_specifier", "class_specifier"), ("call_expression", "identifier", "number_literal")]


def test_descendants_are_the_walks_nodes_of_those_types() -> None:
    tree = syn.parse_tree(TEXT)
    for node in syn.walk(tree.root_node):
        for types in TYPES:
            want = [n for n in syn.iter_nodes(node) if n.type in types]
            assert syn.descendants(node, *types) == want


def test_a_missing_identifier_where_a_subtree_ends() -> None:
    tree = syn.parse_tree(TEXT)
    missing = [n for n in syn.iter_nodes(tree.root_node) if n.is_missing and n.type == "identifier"]
    assert missing, "the text keeps its parse error"
    ends = [n for n in syn.iter_nodes(tree.root_node) if n.end_byte == missing[0].start_byte and n.start_byte < n.end_byte
            and missing[0] in list(syn.iter_nodes(n))]
    assert ends and all(missing[0] in syn.descendants(n, "identifier") for n in ends)
    assert all(missing[0] not in syn.nodes_of(n, "identifier") for n in ends)


HOST = (b"#define N 256\n__global__ void k(float *a) { a[0] = 1; }\n"
        b"int main(int argc, char **argv) {\n  int n = argc > 1 ? atoi(argv[1]) : 1024; int m = N; dim3 b(32, 4), g;\n"
        b"  g.x = n / 32; m *= 2; scanf(\"%d\", &m);\n  for (int i = 0, j = 0; i < 8; i++, j += 2) { n += j; if (i) m = 3; }\n"
        b"  k<<<g, b>>>(0); k<<<n / 256, N>>>(0);\n}\n")


def test_a_host_environment_from_the_index_is_the_one_from_its_walk() -> None:
    from cudalens.source.host import KINDS, HostEnv
    from cudalens.source.parse import _functions
    from cudalens.source.scope import FileScope

    tree = syn.parse_tree(HOST)
    functions = list(_functions(tree.root_node))
    scope = FileScope.build(tree.root_node, {"N": "256"}, functions)
    body = syn.functions(tree)[-1].body
    walked, indexed = HostEnv(scope, body), HostEnv(scope, body, syn.descendants(body, *KINDS))
    for env in (walked, indexed):
        assert env.ints and env.dim3s and env.unsettled and env.members
    for name in ("ints", "dim3s", "unsettled", "assigned_members", "members", "exits", "tainted"):
        assert getattr(walked, name) == getattr(indexed, name), name
    assert list(walked.guards.values()) == list(indexed.guards.values())
    for launch in syn.launches(body):
        parts = [c for c in launch.children if c.type == "kernel_call_syntax"][0].named_children
        assert walked.dims(parts[0], syn.line(launch)) == indexed.dims(parts[0], syn.line(launch))


def test_texts_within_are_the_nodes_texts() -> None:
    tree = syn.parse_tree(TEXT + "int ünïcode = 1; // é\n".encode())
    for node in syn.walk(tree.root_node):
        inside = list(syn.iter_nodes(node))
        assert syn.texts_within(node, inside) == [syn.text(n) for n in inside]


def test_the_index_holds_every_node_in_a_cursors_preorder() -> None:
    def cursor_walk(root: syn.Node) -> list[syn.Node]:
        nodes, cursor = [], root.walk()
        while True:
            nodes.append(cursor.node)
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return nodes

    for text in (TEXT, HOST, TEXT[:90] + b"}}} (( <<<", b"", b"// only a comment\n"):
        root = syn.parse_tree(text).root_node
        assert list(syn._index.__wrapped__(root).nodes) == cursor_walk(root)
