"""FileScope.const_value reads a bare name without building its expression (most values the launch layer
asks for are one): the value, and its type, are those the expression gives."""

from __future__ import annotations

import itertools

from cudalens.source import expr as E
from cudalens.source.parse import _functions, parse_source
from cudalens.source.scope import FileScope, _iter

SOURCE = """
#define N 128
#define HALF (N / 2)
#define SELF SELF
#define LOOP_A LOOP_B
#define LOOP_B LOOP_A
#define WORD hello
#define FLOATY 2.5f
#define BIG 0xffffffffffffffffull
const int tile = 16;
constexpr float scale = 0.5f;
const int from_macro = HALF + 1;
static const int unknown_init = rand();
typedef float floatX;
int host_twice(int x) { return 2 * x; }
void run(int n, float f) {
  int uses = N + HALF + SELF + LOOP_A + WORD + FLOATY + BIG + tile + scale + from_macro + unknown_init + n + f
             + missing + floatX + host_twice + argv + sizeof_x + true_name;
}
"""


def _as_expression(scope, node, extra):
    """const_value as it was for every node: the expression built from the node, then evaluated."""
    try:
        vals = scope._macro_map()
        if extra:
            vals = {**vals, **extra}

        def resolve(name):
            if extra and name in extra:
                v = extra[name]
                return E.num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else ("v", name)
            return scope.resolve_const(name)

        return E.eval_scalar(E.from_node(node, resolve, on_call=lambda n: scope._pure_call(n, resolve)), vals)
    except (E.Unknown, RecursionError):
        return None


def test_a_bare_name_has_the_value_its_expression_gives():
    model = parse_source(SOURCE, "names.cu")
    root = model.tree.root_node
    scope = FileScope.build(root, dict(model.defines), list(_functions(root)))
    names = [n for n in _iter(root) if n.type == "identifier"]
    assert len({n.text for n in names}) > 20
    extras = [None, {}, {"n": 3}, {"n": 3.0}, {"n": True}, {"f": 1.5, "tile": 7}, {"N": 5}, {"missing": "text"},
              {"WORD": 4, "n": None}, {"HALF": (1, 2)}, {"LOOP_A": 1}, {"scale": False, "argv": 2**70}]
    checked = 0
    for node, extra in itertools.product(names, extras):
        got, want = scope.const_value(node, extra), _as_expression(scope, node, extra)
        assert repr(got) == repr(want), (node.text, extra)  # the same value and type (1, 1.0 and True differ)
        checked += want is not None
    assert checked > 50
