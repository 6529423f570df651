"""The one launch resolution (project/sites.py, project/resolve.py) on small projects written here.

Each test writes a project into tmp_path, resolves it as `cudalens check DIR` would, and checks the
launch a kernel gets against the values the source passes (computed here from those values).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudalens.access.model import parse_blocks, parse_defines
from cudalens.project.launches import ValueRange
from cudalens.project.resolve import resolve_project
from cudalens.project.tree import build_flags, find_root, load_project
from cudalens.source.parse import parse_file


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def resolved(root: Path, kernel: str, file: str, **kw):
    from cudalens.project import build_context

    project = load_project(root, named=True)
    build = build_context([str(root / file)], project=project, use_config=False)
    table = resolve_project(project, build)
    model = parse_file(root / file, forced=build.forced_macros(root / file))
    (k,) = [k for k in model.kernels if k.name == kernel]
    return table.resolve(k, **kw), table, k


COPY = "__global__ void copy(float *o, const float *i, int s) { o[threadIdx.x] = i[threadIdx.x * s]; }\n"


def test_chevrons_across_files_with_a_template_and_a_dim3_in_the_runner(tmp_path):
    write(tmp_path, {
        "kernels/gemm.cuh": "template <int BM, int BK>\n__global__ void gemm(float *c, int n) { c[threadIdx.x] = BM; }\n",
        "runner.cu": '#include "kernels/gemm.cuh"\nvoid run(float *c) {\n  const int bm = 64;\n'
                     "  dim3 block(bm / 2, 8);\n  dim3 grid(4096 / bm, 2);\n  gemm<bm, 8><<<grid, block>>>(c, 4096);\n}\n",
    })
    launch, _table, _k = resolved(tmp_path, "gemm", "kernels/gemm.cuh")
    assert launch.origin == "launch" and launch.site == "runner.cu:6" and launch.via == "chevrons"
    assert launch.block == (64 // 2, 8, 1) and launch.grid == (4096 // 64, 2, 1)
    assert dict(launch.params) == {"n": 4096, "BM": 64, "BK": 8}
    assert launch.template_args == ("bm", "8") and launch.describe() == "launch: runner.cu:6"


def test_launch_apis(tmp_path):
    write(tmp_path, {"k.cu": COPY + (
        "void a(float *o, float *i) {\n  int s = 4;\n  void *args[] = {&o, &i, &s};\n"
        "  cudaLaunchKernel((void *)copy, dim3(8), dim3(128), args, 0, 0);\n}\n"
        "void b(float *o, float *i) {\n  cudaLaunchConfig_t cfg = {};\n  cfg.gridDim = dim3(16);\n"
        "  cfg.blockDim = dim3(64, 2);\n  cudaLaunchKernelEx(&cfg, copy, o, i, 2);\n}\n"
        "void c(float *o, float *i) {\n  int s = 8;\n  void *args[] = {&o, &i, &s};\n"
        "  cudaLaunchCooperativeKernel((void *)copy, 4, 32, args);\n}\n")})
    _l, table, k = resolved(tmp_path, "copy", "k.cu")
    sites = {s.via: s for s in table.launches(k)}
    assert set(sites) == {"cudaLaunchKernel", "cudaLaunchKernelEx", "cudaLaunchCooperativeKernel"}
    assert (sites["cudaLaunchKernel"].block, sites["cudaLaunchKernel"].grid, dict(sites["cudaLaunchKernel"].params)) \
        == ((128, 1, 1), (8, 1, 1), {"s": 4})
    assert (sites["cudaLaunchKernelEx"].block, sites["cudaLaunchKernelEx"].grid,
            dict(sites["cudaLaunchKernelEx"].params)) == ((64, 2, 1), (16, 1, 1), {"s": 2})
    assert sites["cudaLaunchCooperativeKernel"].block == (32, 1, 1)
    assert dict(sites["cudaLaunchCooperativeKernel"].params) == {"s": 8}


def test_dispatch_table_and_function_pointer(tmp_path):
    write(tmp_path, {"k.cu": COPY.replace("copy", "copy_a") + COPY.replace("copy", "copy_b") + COPY.replace("copy", "other")
                     + "typedef void (*K)(float *, const float *, int);\nK kernels[] = {copy_a, copy_b};\n"
                       "void run(float *o, const float *i, int k, bool f) {\n  int n = 1 << 20;\n"
                       "  kernels[k]<<<n / 256, 256>>>(o, i, 4);\n  auto fn = f ? other : copy_a;\n"
                       "  fn<<<2, 96>>>(o, i, 1);\n}\n"})
    for name in ("copy_a", "copy_b"):
        _l, table, k = resolved(tmp_path, name, "k.cu")
        table_site = next(s for s in table.launches(k) if s.via == "dispatch table")
        assert table_site.block == (256, 1, 1) and table_site.grid == ((1 << 20) // 256, 1, 1)
        assert dict(table_site.params) == {"s": 4}
    _l, table, k = resolved(tmp_path, "other", "k.cu")
    (site,) = table.launches(k)
    assert site.via == "function pointer" and site.block == (96, 1, 1)


def test_host_variables_and_argv_defaults(tmp_path):
    write(tmp_path, {"main.cu": "#include <cstdlib>\n#define BLOCK_SIZE_XY 4\n" + COPY + (
        "int main(int argc, char **argv) {\n"
        "  int n = argc > 1 ? atoi(argv[1]) : 2048;\n"
        "  int s = 3;\n  if (argc > 2) s = atoi(argv[2]);\n"
        "  int bs = BLOCK_SIZE_XY;\n  dim3 b(bs, bs);\n"
        "  copy<<<n / (bs * bs), b>>>(0, 0, s);\n}\n")})
    launch, _t, _k = resolved(tmp_path, "copy", "main.cu")
    assert launch.block == (4, 4, 1)
    assert launch.grid == (2048 // 16, 1, 1)
    (name, s), = launch.params
    assert name == "s" and isinstance(s, ValueRange) and (s.lo, s.hi) == (3, 3) and "argv[2]" in s.condition
    assert any("grid depends on argv[1]" in n for n in launch.notes)


def test_makefile_define_wins_over_the_ifndef_default(tmp_path):
    write(tmp_path, {
        "Makefile": "BS ?= 16\nNVCCFLAGS := -O3 -DBLOCK=$(BS) -Iinc\nall:\n\tnvcc $(NVCCFLAGS) main.cu\n",
        "inc/x.h": "#pragma once\n",
        "main.cu": "#ifndef BLOCK\n#define BLOCK 8\n#endif\n" + COPY + "int main() { copy<<<1, BLOCK>>>(0, 0, 1); }\n"})
    flags = build_flags(tmp_path)
    assert flags.source == "Makefile" and "BLOCK=16" in flags.defines
    assert flags.include_dirs == (str((tmp_path / "inc").resolve()),)
    launch, _t, _k = resolved(tmp_path, "copy", "main.cu")
    assert launch.block == (16, 1, 1)


def test_cmake_and_compile_commands_are_found(tmp_path):
    write(tmp_path, {"CMakeLists.txt": "set(TILE 32)\nadd_compile_definitions(TILE_DIM=${TILE})\n"
                                       "set_target_properties(t PROPERTIES CUDA_ARCHITECTURES 80)\n"})
    flags = build_flags(tmp_path)
    assert flags.defines == ("TILE_DIM=32",) and flags.arch == "sm_80"
    write(tmp_path, {"build/compile_commands.json": "[]"})
    assert build_flags(tmp_path).compile_commands == str((tmp_path / "build/compile_commands.json").resolve())


def test_included_cu_is_found_with_its_including_unit(tmp_path):
    write(tmp_path, {"kernels.cu": COPY, "main.cu": '#include "kernels.cu"\nint main() { copy<<<4, 16>>>(0, 0, 2); }\n',
                     "Makefile": "all:\n\tnvcc main.cu\n"})
    project = load_project(tmp_path / "kernels.cu")
    assert Path(project.root) == tmp_path.resolve() and find_root(tmp_path / "main.cu") == tmp_path
    assert project.includers(str(tmp_path / "kernels.cu")) == (str((tmp_path / "main.cu").resolve()),)
    launch, _t, _k = resolved(tmp_path, "copy", "kernels.cu")
    assert launch.site == "main.cu:2" and launch.block == (16, 1, 1) and dict(launch.params) == {"s": 2}


def test_no_launch_is_an_assumption_and_user_values_name_a_kernel(tmp_path):
    write(tmp_path, {"k.cu": COPY + COPY.replace("copy", "transpose")})
    launch, table, k = resolved(tmp_path, "copy", "k.cu")
    assert launch.origin == "assumed" and launch.block == (256, 1, 1)
    assert launch.describe() == ("assumed: 256 threads, no launch found; findings hold for blocks of "
                                 "256, 128, 512 threads")
    blocks = parse_blocks(("transpose=32,8", "64"))
    assert blocks == {"transpose": (32, 8, 1), None: (64, 1, 1)}
    model = parse_file(tmp_path / "k.cu")
    t = next(x for x in model.kernels if x.name == "transpose")
    mine = table.resolve(t, blocks, parse_defines(["transpose:s=7", "copy:s=1"]))
    assert mine.origin == "user" and mine.block == (32, 8, 1) and dict(mine.params) == {"s": 7}
    assert table.resolve(k, blocks).block == (64, 1, 1)
    assert parse_blocks(("32,8",)) == (32, 8, 1)
    with pytest.raises(ValueError):
        parse_defines(["a:b:c=1"])


def test_several_launches_use_the_first_known_block_and_name_the_others(tmp_path):
    write(tmp_path, {"k.cu": COPY + "void f(int b) {\n copy<<<1, b>>>(0, 0, 1);\n copy<<<1, 64>>>(0, 0, 1);\n"
                                    " copy<<<1, 128>>>(0, 0, 1);\n}\n"})
    launch, _t, _k = resolved(tmp_path, "copy", "k.cu")
    assert launch.block == (64, 1, 1) and launch.site == "k.cu:4"
    assert any("(128, 1, 1) at k.cu:5" in n for n in launch.notes)


def test_check_reports_the_launch_in_json_and_text(tmp_path, capsys):
    from cudalens.cli import main

    write(tmp_path, {"kernels.cu": COPY, "main.cu": '#include "kernels.cu"\n#include "kernels.cu"\n'
                     "int main() { copy<<<4, 16>>>(0, 0, 2); }\n",
                     "lonely.cu": COPY.replace("copy", "lonely")})
    assert main(["check", str(tmp_path), "--no-compile", "--format", "json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    kernels = {k["name"]: k for k in data["kernels"]}
    assert kernels["copy"]["launch"]["from"] == "launch: main.cu:3" and kernels["copy"]["block"] == [16, 1, 1]
    assert kernels["lonely"]["launch"]["origin"] == "assumed"
    assert all(f["launch"]["from"] for f in data["findings"] if f.get("kernel") in kernels)
    assert main(["check", str(tmp_path), "--no-compile"]) in (0, 1)
    out = capsys.readouterr().out
    assert "kernel copy: launch: main.cu:3 (block 16x1x1)" in out
    assert "kernel lonely: assumed: 256 threads, no launch found; findings hold for blocks of" in out


def test_same_kernel_name_in_two_programs_joins_each_to_its_own(tmp_path):
    for folder, block in (("a", 32), ("b", 128)):
        write(tmp_path, {f"{folder}/k.cu": COPY, f"{folder}/main.cu": '#include "common.h"\n'
                         f"int main() {{ copy<<<1, {block}>>>(0, 0, 1); }}\n",
                         f"{folder}/common.h": "__global__ void copy(float *, const float *, int);\n"})
    for folder, block in (("a", 32), ("b", 128)):
        launch, table, k = resolved(tmp_path, "copy", f"{folder}/k.cu")
        assert launch.block == (block, 1, 1) and launch.site == f"{folder}/main.cu:2"
        assert len(table.launches(k)) == 1


def test_wrapper_parameters_take_the_values_its_callers_pass(tmp_path):
    write(tmp_path, {"pick.cu": COPY + 'extern "C" void run(float *o, const float *i, int n, int s) {\n'
                                       "  copy<<<(n + 127) / 128, 128>>>(o, i, s);\n}\n",
                     "main.cpp": 'extern "C" void run(float *, const float *, int, int);\n'
                                 "int main() {\n  const int n = 1 << 20;\n  const int fields = 3;\n"
                                 "  run(0, 0, n, fields);\n}\n"})
    launch, _t, _k = resolved(tmp_path, "copy", "pick.cu")
    assert dict(launch.params) == {"s": 3} and launch.grid == (((1 << 20) + 127) // 128, 1, 1)


def test_compile_commands_defines_reach_the_launch(tmp_path):
    write(tmp_path, {"src/main.cu": "#ifndef TILE\n#define TILE 4\n#endif\n" + COPY
                     + "int main() { dim3 b(TILE, 8); copy<<<1, b>>>(0, 0, 1); }\n",
                     "build/compile_commands.json": json.dumps([{"directory": ".", "file": "../src/main.cu",
                                                                  "command": "nvcc -DTILE=32 -c ../src/main.cu"}])})
    launch, _t, _k = resolved(tmp_path, "copy", "src/main.cu")
    assert launch.block == (32, 8, 1)


def test_driver_api_graph_nodes_and_class_members(tmp_path):
    write(tmp_path, {"k.cu": 'extern "C" ' + COPY + COPY.replace("copy", "node_k") + COPY.replace("copy", "member_k") + (
        "void drv(CUmodule mod) {\n  CUfunction f;\n  cuModuleGetFunction(&f, mod, \"copy\");\n  int s = 6;\n"
        "  void *args[] = {0, 0, &s};\n  cuLaunchKernel(f, 10, 1, 1, 64, 2, 1, 0, 0, args, 0);\n}\n"
        "void graph() {\n  cudaKernelNodeParams p = {0};\n  p.func = (void *)node_k;\n  p.gridDim = dim3(3);\n"
        "  p.blockDim.x = 48;\n  p.blockDim.y = p.blockDim.z = 1;\n}\n"
        "struct Step {\n  int threads = 0;\n  void run() { member_k<<<2, 160>>>(0, 0, 1); }\n};\n")})
    _l, table, k = resolved(tmp_path, "copy", "k.cu")
    (site,) = table.launches(k)
    assert (site.via, site.grid, site.block, dict(site.params)) == ("cuLaunchKernel", (10, 1, 1), (64, 2, 1), {"s": 6})
    node, _t, _k = resolved(tmp_path, "node_k", "k.cu")
    assert (node.via, node.grid, node.block) == ("graph kernel node", (3, 1, 1), (48, 1, 1))
    member, _t, _k = resolved(tmp_path, "member_k", "k.cu")
    line = (tmp_path / "k.cu").read_text().splitlines().index("  void run() { member_k<<<2, 160>>>(0, 0, 1); }") + 1
    assert member.block == (160, 1, 1) and member.site == f"k.cu:{line}"


def test_a_template_wrapper_passes_its_type_argument_to_sizeof(tmp_path):
    """cuda-samples' reduce<T>(size, threads, ...): the dynamic shared memory `threads * sizeof(T)` is
    worked out with T bound by the caller's `reduce<double>(...)` and threads by its argument."""
    write(tmp_path, {
        "k.cu": COPY + "template <class T>\nvoid reduce(int threads, T *d) {\n  int smem = threads * sizeof(T);\n"
                       "  copy<<<1, threads, smem>>>(0, 0, 1);\n}\n"
                       "template void reduce<double>(int threads, double *d);\n",
        "main.cpp": "template <class T> void reduce(int threads, T *d);\n"
                    "int main() { reduce<double>(128, (double *)0); }\n"})
    launch, _t, _k = resolved(tmp_path, "copy", "k.cu")
    assert launch.block == (128, 1, 1) and launch.dynamic_smem == 128 * 8


def test_sizeof_of_an_unbound_name_stays_unknown():
    from cudalens.source.parse import parse_source
    from cudalens.source.scope import FileScope

    m = parse_source("void f() { int a = 4 * sizeof(T); int b = 2 * sizeof(float4); int c = sizeof(x); }\n", "h.cu")
    scope = FileScope.build(m.tree.root_node, {}, [])
    values = [d.child_by_field_name("value") for d in _iter_nodes(m.tree.root_node) if d.type == "init_declarator"]
    assert [scope.const_value(v) for v in values] == [None, 32, None]
    assert scope.const_value(values[0], {"sizeof(T)": 2}) == 8
    assert scope.const_value(values[2], {"x": 3}) is None  # a variable's size is not its value


def _iter_nodes(node):
    yield node
    for c in node.named_children:
        yield from _iter_nodes(c)


def test_a_header_only_a_subfolder_makefile_names_is_found_in_the_repository(tmp_path):
    """cuda-samples: Samples/x/x.cu includes "helper.h" of Common/, named only by the sample's own
    Makefile (-I../../Common). The block built from its macros is worked out, and the include graph
    has the edge."""
    write(tmp_path, {
        "Common/helper.h": "#pragma once\n#define TILE 32\n#define ROWS 8\n",
        "Samples/x/x.cu": '#include "helper.h"\n' + COPY + "int main() { dim3 b(TILE, ROWS); copy<<<1, b>>>(0, 0, 1); }\n",
        "Samples/x/Makefile": "INCLUDES := -I../../Common\n",
        "Other/helper.h": "#define TILE 4\n"})  # farther from the sample: not the one used
    launch, _t, _k = resolved(tmp_path, "copy", "Samples/x/x.cu")
    assert launch.block == (32, 8, 1)
    project = load_project(tmp_path, named=True)
    unit = str((tmp_path / "Samples/x/x.cu").resolve())
    assert project.includes[unit] == (str((tmp_path / "Common/helper.h").resolve()),)


DISPATCH = ("template <int B>\n__global__ void tile(float *a) { a[threadIdx.y * B + threadIdx.x] = 1.0f; }\n"
            "int run(int block_size, float *d) {\n  dim3 threads(block_size, block_size);\n"
            "  if (block_size == 16) {\n    tile<16><<<1, threads>>>(d);\n  } else {\n"
            "    tile<32><<<1, threads>>>(d);\n  }\n  return 0;\n}\n"
            "int main() {\n  int block_size = %s;\n  float *d = 0;\n  return run(block_size, d);\n}\n")


@pytest.mark.parametrize("block_size", [16, 32])
def test_a_launch_under_an_if_the_programs_values_settle_false_is_not_the_kernels_launch(tmp_path, block_size):
    # cuda-samples' matrixMul: `if (block_size == 16) K<16><<<...>>> else K<32><<<...>>>`, block_size from main
    write(tmp_path, {"mm.cu": DISPATCH % block_size})
    launch, _table, _k = resolved(tmp_path, "tile", "mm.cu")
    taken, skipped = (6, 8) if block_size == 16 else (8, 6)
    assert launch.site == f"mm.cu:{taken}" and launch.block == (block_size, block_size, 1)
    assert dict(launch.params)["B"] == block_size
    assert any(f"mm.cu:{skipped} is not made" in n and "block_size == 16" in n for n in launch.notes)


def test_a_launch_under_an_if_on_a_program_input_is_kept(tmp_path):
    # the condition reads argv: the values do not settle it, both launches stay (the first evaluated)
    text = (DISPATCH % "atoi(argv[1])").replace("int main() {", "int main(int argc, char **argv) {")
    write(tmp_path, {"mm.cu": text})
    launch, _table, _k = resolved(tmp_path, "tile", "mm.cu")
    assert not any("is not made" in n for n in launch.notes)


def test_a_site_left_out_for_some_callers_values_keeps_the_values_that_reach_it(tmp_path):
    # cuda-samples' bitonicSort: one launch site, reached only for the sizes its `if` lets through
    write(tmp_path, {"s.cu": (
        "__global__ void big(float *a, int n) { a[threadIdx.x * n] = 0.0f; }\n"
        "__global__ void small(float *a, int n) { a[threadIdx.x] = n; }\n"
        "void sort(float *d, int n) {\n  if (n <= 1024) {\n    small<<<1, 256>>>(d, n);\n  } else {\n"
        "    big<<<n / 256, 256>>>(d, n);\n  }\n}\n"
        "int main() {\n  float *d = 0;\n  sort(d, 64);\n  sort(d, 4096);\n  return 0;\n}\n")})
    big, _table, _k = resolved(tmp_path, "big", "s.cu")
    assert big.site == "s.cu:7" and dict(big.params)["n"] == 4096 and big.grid == (4096 // 256, 1, 1)
    assert "the launch at s.cu:7 is not made with the values for which `n <= 1024` is true" in big.notes
    small, _table, _k = resolved(tmp_path, "small", "s.cu")
    assert small.site == "s.cu:5" and dict(small.params)["n"] == 64
