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
