"""The launch table's faster passes (issue #29) give what the slower ones gave: the query search
(syntax.find_all) finds the nodes the Python walk found, the signatures-only parse names the kernels
as the full parse does, and the table follows the order the files were given, never a hash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudalens.project.host_code import _iter
from cudalens.project.resolve import _relevant, resolve_models
from cudalens.project.sites import _assigned
from cudalens.project.tree import Project
from cudalens.source import syntax as syn
from cudalens.source.parse import parse_file, parse_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "tests" / "projects").glob("*/*.cu"))

DISPATCH = """
__global__ void k1(float *a, int n) { a[threadIdx.x] = n; }
__global__ void k2(float *a, int n) { a[threadIdx.x * 2] = n; }
typedef void (*kfn)(float *, int);
kfn table[2] = {k1, k2};
kfn pick;
void run(float *d, int n, int which) {
  table[0] = k2;
  pick = which ? k1 : k2;
  table[which]<<<4, 128>>>(d, n);
  pick<<<2, 64>>>(d, n);
}
"""


@pytest.mark.parametrize("path", CORPUS[:12], ids=lambda p: p.parent.name)
def test_find_all_is_the_walk(path):
    root = parse_file(path).tree.root_node
    for types in (("function_definition",), ("call_expression", "assignment_expression"), ("init_declarator",)):
        walked = [n for n in _iter(root) if n.type in types]
        assert syn.find_all(root, *types) == walked
        for fn in walked[:5]:  # under a node: that node's subtree only, itself included
            assert syn.find_all(fn, *types) == [n for n in _iter(fn) if n.type in types]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.parent.name)
def test_signatures_only_names_the_kernels_as_the_full_parse(path):
    full, light = parse_file(path), parse_file(path, signatures_only=True)
    assert [(k.name, k.file, k.line, k.params, k.template_params, k.is_template) for k in light.kernels] == \
           [(k.name, k.file, k.line, k.params, k.template_params, k.is_template) for k in full.kernels]
    assert light.defines == full.defines and light.text == full.text
    assert all(not k.accesses for k in light.kernels) and not light.launch_sites  # the bodies were not walked


def _assigned_walk(model, name):
    """_assigned as it was: one walk of the whole file per name."""
    found, table = [], False
    for x in _iter(model.tree.root_node):
        value = None
        if x.type == "init_declarator":
            d = x.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier", "field_identifier"):
                d = d.child_by_field_name("declarator")
            if d is not None and syn.text(d) == name:
                value = x.child_by_field_name("value")
                table = table or "[" in syn.text(x.child_by_field_name("declarator"))
        elif x.type == "assignment_expression":
            left = x.child_by_field_name("left")
            if left is not None and (syn.text(left) == name or syn.text(left).startswith(name + "[")):
                value = x.child_by_field_name("right")
                table = table or left.type == "subscript_expression"
        if value is not None:
            found += [syn.text(y) for y in _iter(value) if y.type == "identifier"]
    return tuple(found), table


def test_assigned_indexes_every_name_as_the_walk_per_name_did():
    m = parse_source(DISPATCH, "d.cu")
    for name in ("table", "pick", "k1", "nothing", "a"):
        assert _assigned(m, name) == _assigned_walk(m, name)
    assert _assigned(m, "table") == (("k1", "k2", "k2"), True)
    sites = {(r.kernel, r.site, r.via) for r in resolve_models([m]).sites[("k1", os.path.realpath("d.cu"))]}
    assert sites == {("k1", "d.cu:10", "dispatch table"), ("k1", "d.cu:11", "function pointer")}


def test_files_outside_the_root_keep_the_order_given(tmp_path):
    names = [f"u{i}.cu" for i in range(8)]
    for n in names:
        (tmp_path / n).write_text("__global__ void k(int *a) {}\n")
    given = [str(tmp_path / n) for n in reversed(names)]
    got = _relevant(Project(str(tmp_path / "elsewhere"), (), {}), given)
    assert got == [os.path.realpath(p) for p in given]


def test_the_table_is_the_same_under_every_hash_seed(tmp_path):
    """Files outside the project root define the same kernel; which one the table treats as the
    first definition (whose launches get their callers' values) followed a set's order
    (PYTHONHASHSEED) before."""
    body = "__global__ void twin(float *a, int n) {{ a[threadIdx.x] = n; }}\n" \
           "void run{i}(float *d, int n) {{ twin<<<2, 128>>>(d, n); }}\n" \
           "int main() {{ run{i}(0, {n}); return 0; }}\n"
    files = []
    for i in range(6):
        (tmp_path / f"f{i}").mkdir()
        f = tmp_path / f"f{i}" / "t.cu"
        f.write_text(body.format(i=i, n=100 + i))
        files.append(str(f))
    code = ("import sys\nfrom cudalens.project.resolve import resolve_project\nfrom cudalens.project.tree import Project\n"
            "t = resolve_project(Project(sys.argv[1], ()), extra=sys.argv[2:])\n"
            "print(sorted((k[1], [(r.site, r.params) for r in v]) for k, v in t.sites.items()))")
    outs = set()
    for seed in ("1", "2", "3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code, str(tmp_path / "none"), *files], env=env,
                                capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1


ODD = """
__global__ void k(float *a) { struct Local { int f(int x) { int y = x; y = 2; return y; } }; a[0] = Local().f(1); }
void host(int n) { MACRO(n) { int z = n; } auto g = [&](int q) { int w = q; w = 3; return w; }; for (int i = 0, j = 1; i < n; i = i + j) {} }
int broken( { int a = ; b = 
"""


@pytest.mark.parametrize("path", [None, *CORPUS], ids=lambda p: p.parent.name + "/" + p.name if p else "odd")
def test_the_cursor_walk_finds_each_kind_as_the_query_does(path):
    from cudalens.project.host_code import _SEARCHED, find, found_in_file

    model = parse_file(path) if path is not None else parse_source(ODD, "odd.cu")
    root = model.tree.root_node
    if path is None:  # a member of a local class, a parse error
        assert root.has_error and len(find(root, "function_definition")) >= 3
    for kinds in (*((k,) for k in _SEARCHED), ("init_declarator", "assignment_expression")):
        assert find(root, *kinds) == found_in_file(model, *kinds) == syn.find_all(root, *kinds)
        for fn in syn.find_all(root, "function_definition")[:5]:
            assert find(fn, *kinds) == syn.find_all(fn, *kinds)


@pytest.mark.parametrize("path", [None, *CORPUS], ids=lambda p: p.parent.name + "/" + p.name if p else "odd")
def test_walks_read_once_give_what_each_walk_gave(path):
    """The parameter names read alone are params()'s; a host body's calls and launch sites from its one
    walk are those of a walk of its own; _assigned's names are those of a walk per name."""
    from cudalens.project.host_code import _host_bodies, _is_site, body_calls, body_nodes, param_names, scopes_kept
    from cudalens.source.declarations import params

    model = parse_file(path) if path is not None else parse_source(ODD, "odd.cu")
    for fn in syn.find_all(model.tree.root_node, "function_definition"):
        assert param_names(fn) == tuple(p.name for p in params(fn))
    with scopes_kept():
        for _fn, body in _host_bodies(model):
            walked = list(_iter(body))
            assert body_nodes(body) == walked
            calls = [(c, syn.call_name(c)) for c in walked if c.type == "call_expression" and not syn.is_launch(c)]
            assert body_calls(body) == (calls, [n for n in walked if _is_site(n)])
    names = {syn.text(n) for n in _iter(model.tree.root_node) if n.type == "identifier"}
    for name in sorted(names)[:40]:
        assert _assigned(model, name) == _assigned_walk(model, name)


CHAIN = """
#include <stdlib.h>
__global__ void k1(float *a, int n) { a[threadIdx.x] = n; }
template <int TILE> __global__ void k2(float *a, int n) { a[threadIdx.x * TILE] = n; }
void launch1(float *a, int n, int block_size) { k1<<<(n + block_size - 1) / block_size, block_size>>>(a, n); }
void launch2(float *a, int n, int block_size) {
  const int grid = n / block_size;
  if (block_size == 64) { k2<4><<<grid, block_size>>>(a, n); } else { k2<8><<<grid, block_size * 2>>>(a, n * 2); }
}
void dispatch(int kernel_num, float *a, int n, int block_size) {
  switch (kernel_num) { case 1: launch1(a, n, block_size); break; case 2: launch2(a, n, block_size); break; }
}
int main(int argc, char **argv) {
  int n = 1 << 20;
  int kernel_num = argc > 1 ? atoi(argv[1]) : 1;
  int block_sizes[] = {32, 64, 128, 256};
  dispatch(kernel_num, 0, n, 512);
  for (int j = 0; j < sizeof(block_sizes) / sizeof(int); j++) {
    int block_size = block_sizes[j];
    dispatch(kernel_num, 0, n, block_size);
    dispatch(2, 0, n / 2, block_size);
  }
  return 0;
}
"""


@pytest.mark.parametrize("project", [None, *sorted({p.parent for p in CORPUS})], ids=lambda p: p.name if p else "chain")
def test_values_kept_while_resolving_are_those_worked_out_again(project, monkeypatch, tmp_path):
    """What the resolution keeps while scopes_kept holds (each function's call values per callers' tuple,
    the seeded and per-iteration environments, each scalar value) gives the table worked out afresh."""
    import cudalens.project.chains as chains
    import cudalens.project.host_code as host_code
    import cudalens.project.sites as sites

    if project is None:  # wrappers calling wrappers, in a loop over block sizes: the callers take rounds
        (tmp_path / "chain.cu").write_text(CHAIN)
        project = tmp_path
    models = [parse_file(f, signatures_only=True) for f in sorted(project.glob("*.cu*"))]
    kept = repr(sorted(resolve_models(models, str(project)).sites.items()))
    assert project != tmp_path or kept.count("ResolvedLaunch(") >= 10
    monkeypatch.setattr(host_code, "once", lambda key, held, make: make())
    monkeypatch.setattr(chains, "once", lambda key, held, make: make())
    monkeypatch.setattr(sites, "once", lambda key, held, make: make())
    assert repr(sorted(resolve_models(models, str(project)).sites.items())) == kept


def test_a_loop_iterations_timeline_starts_from_the_one_before_the_loop():
    """HostEnv.fixed: before the loop the copy's timeline is read from the environment it copies, after
    it evaluated again; both as a copy that evaluates everything itself gives them."""
    from cudalens.project.host_code import _host_bodies, _scope, host_env, scopes_kept
    from cudalens.source.host_loops import loop_choices

    model = parse_source(CHAIN, "chain.cu")
    with scopes_kept():
        scope, _functions = _scope(model)
        checked = 0
        for _fn, body in _host_bodies(model):
            env = host_env(scope, body)
            for seeded in (env, env.seeded_copy({"block_size": 96, "n": 4096})):
                for call in syn.find_all(body, "call_expression"):
                    for vals, _note, since in loop_choices(seeded, call):
                        if not vals:
                            continue
                        fast = seeded.fixed(vals, since)
                        slow = seeded.fixed(vals, since)
                        slow._prefix = None  # evaluates every definition itself
                        assert fast._timeline() == slow._timeline()
                        assert [fast._values_before(ln) for ln in range(40)] == [slow._values_before(ln) for ln in range(40)]
                        checked += 1
        assert checked >= 8
