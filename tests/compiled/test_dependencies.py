"""The compile's dependency list (the key of both caches) comes from the device compile's own
preprocessor, in the one pass a plain ``nvcc -cubin`` runs; a unit without kernels is not
disassembled."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cudalens.compiled import cache
from cudalens.compiled import compile as compile_mod


def test_the_compile_runs_one_preprocessor_pass(wheel_toolchain, tmp_path):
    """nvcc's own -MD adds a second, host-side ``gcc -E`` pass; the dependency list must come from the
    device pass that runs anyway."""
    unit = tmp_path / "k.cu"
    unit.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    cmd = compile_mod.nvcc_command(wheel_toolchain.get("nvcc").path, compile_mod.build_flags("9.0", None, ()), unit,
                                   tmp_path / "out.cubin", tmp_path)
    dry = subprocess.run([*cmd, "--dryrun"], capture_output=True, text=True, env=wheel_toolchain.env(), cwd=tmp_path,
                         check=False)
    steps = [line for line in dry.stderr.splitlines() if line.startswith("#$ ") and "=" not in line.split()[1]]
    preprocess = [s for s in steps if " -E " in s]
    assert dry.returncode == 0 and len(preprocess) == 1, steps
    assert f"-MF {cache.DEPFILE}" in preprocess[0] and not any("Filter Dependencies" in s for s in steps)


def test_the_list_is_what_the_device_compile_read(wheel_toolchain, tmp_path):
    """A header only device code includes is a dependency (and editing it compiles again); one only
    host code includes is not (the compile never reads it)."""
    from cudalens.compiled import compile_file

    (tmp_path / "dev.cuh").write_text("#define SCALE 2.0f\n")
    (tmp_path / "host.h").write_text("#define HOST_ONLY 1\n")
    unit = tmp_path / "k.cu"
    unit.write_text('#ifdef __CUDA_ARCH__\n#include "dev.cuh"\n#else\n#include "host.h"\n#define SCALE 1.0f\n#endif\n'
                    "__global__ void k(float *a) { a[threadIdx.x] *= SCALE; }\n")
    first = compile_file(unit, "9.0", None, (), True, wheel_toolchain)
    assert str(tmp_path / "dev.cuh") in first.deps and str(tmp_path / "host.h") not in first.deps
    assert str(unit) in first.deps and not any(Path(d).name == "tu.cu" for d in first.deps)
    assert compile_file(unit, "9.0", None, (), True, wheel_toolchain).cache_hit
    (tmp_path / "dev.cuh").write_text("#define SCALE 3.0f\n")
    assert not compile_file(unit, "9.0", None, (), True, wheel_toolchain).cache_hit


def test_without_a_dependency_file_the_kept_preprocessed_unit_gives_the_list(tmp_path):
    """A host compiler that ignores -MD: the line markers of the unit nvcc kept name the same files."""
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real", target_is_directory=True)
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "tu.cpp1.ii").write_text(
        f'# 1 "{tmp_path}/tu.cu"\n# 1 "<built-in>"\n# 1 "<command-line>"\n# 1 "{tmp_path}/linked/a.h" 1\n'
        'int a;\n# 7 "relative.h" 1\n# 2 "odd \\"name\\".h" 1\n# 3 "' + f'{tmp_path}/tu.cu" 2\n')
    got = cache.compile_deps(tmp_path, keep, leave_out=tmp_path / "tu.cu")
    assert got == [str(tmp_path / "real" / "a.h"), str(tmp_path / "relative.h"), str(tmp_path / 'odd "name".h')]
    assert cache.compile_deps(tmp_path / "nothing-here", keep=None) == []


def test_depfile_paths_resolve_as_realpath_does(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "sub").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "d" / "sub", target_is_directory=True)
    (tmp_path / "d" / "h.h").write_text("")
    (tmp_path / "d" / "sub" / "leaf.h").symlink_to(tmp_path / "d" / "h.h")
    names = ["ln/../h.h", "ln/leaf.h", "d/./h.h", "missing/x.h", f"{tmp_path}/d/h\\ space.h"]
    text = "out.o: " + " \\\n ".join(names) + "\n"
    expected = list(dict.fromkeys(os.path.realpath(os.path.join(str(tmp_path), n.replace("\\ ", " "))) for n in names))
    assert cache.parse_depfile(text, tmp_path) == expected
    assert expected[0] == str(tmp_path / "d" / "h.h") and len(expected) == 3  # the three names of h.h are one file


@pytest.mark.parametrize("escaped", [False, True], ids=["plain", "with_an_escape"])
def test_depfile_names_resolve_as_realpath_does_with_and_without_escapes(tmp_path, escaped):
    """A list without backslashes is split on whitespace, a folder's real path is joined to the leaf by
    hand (the fast paths of parse_depfile and _real_paths): the same names as realpath gives."""
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "ln").symlink_to(tmp_path / "d" / "sub", target_is_directory=True)
    (tmp_path / "d" / "h.h").write_text("")
    (tmp_path / "d" / "sub" / "leaf.h").symlink_to(tmp_path / "d" / "h.h")
    names = ["ln/../h.h", "ln/leaf.h", f"{tmp_path}//d//./h.h", "d/sub/..", "d/sub/", "d/cost$$.h", "/", "//tmp",
             "ln//leaf.h", "missing/../x.h", "./d/h.h"] + (["d/h\\ space.h"] if escaped else [])
    text = "out.o: " + " \\\n ".join(names) + "\n"
    expected = list(dict.fromkeys(os.path.realpath(os.path.join(str(tmp_path), n.replace("\\ ", " ").replace("$$", "$")))
                                  for n in names))
    assert cache.parse_depfile(text, tmp_path) == expected


def test_a_run_memo_gives_the_lists_and_digests_of_reading_each_unit_afresh(tmp_path):
    """check's compile-ahead process keeps the shared headers' real folders, real paths and digests for the run
    (cache.RunMemo): the same dependency lists and cache digests as without."""
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "ln").symlink_to(tmp_path / "d" / "sub", target_is_directory=True)
    (tmp_path / "d" / "h.h").write_text("x")
    (tmp_path / "d" / "sub" / "leaf.h").symlink_to(tmp_path / "d" / "h.h")
    units = ["out.o: ln/../h.h ln/leaf.h d/h.h\n", "out.o: d/sub/leaf.h ln/leaf.h d/./h.h missing.h\n"]
    memo = cache.RunMemo()
    for text in units + units:
        deps = cache.parse_depfile(text, tmp_path, memo)
        assert deps == cache.parse_depfile(text, tmp_path)
        assert cache.deps_digest("k", deps, (), memo.digests) == cache.deps_digest("k", deps)
    assert memo.folders and memo.paths and memo.digests


def test_a_unit_without_kernels_is_not_disassembled(wheel_toolchain, tmp_path, monkeypatch):
    from cudalens.compiled import compile_file

    def refuse(*args, **kwargs):
        raise AssertionError("nvdisasm/cuobjdump run for a cubin without kernels")

    unit = tmp_path / "host.cu"
    unit.write_text("int twice(int x) { return 2 * x; }\n")
    monkeypatch.setattr(compile_mod, "_binary_facts", refuse)
    result = compile_file(unit, "9.0", None, (), False, wheel_toolchain)
    assert result.kernels == {} and str(unit) in result.deps


def test_a_host_compiler_that_writes_no_dependency_file(wheel_toolchain, tmp_path, monkeypatch):
    """A host compiler that ignores -MD/-MF (here g++ behind a script that drops them): the list comes
    from the kept preprocessed unit's line markers, and names the same files."""
    import shutil
    import stat

    from cudalens.compiled import compile_file

    gxx = shutil.which("g++")
    assert gxx is not None
    wrapped = tmp_path / "bin" / "g++"
    wrapped.parent.mkdir()
    wrapped.write_text('#!/bin/sh\nfor a in "$@"; do shift; case "$a" in -MD) ;; -MF) skip=1 ;; *) '
                       'if [ -n "$skip" ]; then skip=; else set -- "$@" "$a"; fi ;; esac; done\n'
                       f'exec {gxx} "$@"\n')
    wrapped.chmod(wrapped.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "w.cuh").write_text("#define W 2\n")
    unit = tmp_path / "k.cu"
    unit.write_text('#include "w.cuh"\n__global__ void k(float *a) { a[threadIdx.x] *= W; }\n')
    markers: list[list[str]] = []
    read_markers = cache._marker_deps
    monkeypatch.setattr(cache, "_marker_deps", lambda *a: markers.append(read_markers(*a)) or markers[-1])
    with_file = compile_file(unit, "9.0", None, (), False, wheel_toolchain)
    assert not markers
    without = compile_file(unit, "9.0", None, ("-ccbin", str(wrapped)), False, wheel_toolchain)
    assert len(markers) == 1 and str(tmp_path / "w.cuh") in without.deps
    assert set(without.deps) == set(with_file.deps)
