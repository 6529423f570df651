"""The flags read from a Makefile are those of the target ``make`` builds by default.

Reproduces rodinia's gaussian/nw/pathfinder layout: the default target (``release``) compiles the
unit plainly, a later ``clang`` target adds ``-DTIMING``, under which the unit includes a
``timing.h`` that is not in the repository; taking every ``-D`` of the file made the unit fail to
compile for the analysis.
"""

from __future__ import annotations

import json
from pathlib import Path

from cudalens.project.makefile import default_build_text, default_goal, parse
from cudalens.project.tree import build_flags

RODINIA_LIKE = """include ../common/make.config

CC := $(CUDA_DIR)/bin/nvcc
SRC = gauss.cu
EXE = gauss

release: $(SRC)
\t$(CC) $(KERNEL_DIM) -DBLOCK=$(BS) $(SRC) -o $(EXE)

clang: $(SRC)
\tclang++ $(SRC) -o $(EXE) -I../util --cuda-gpu-arch=sm_20 \\
\t\t-lcudart_static -DTIMING

clean:
\trm -f $(EXE)
BS ?= 16
"""

UNIT = """#ifdef TIMING
#include "timing.h"
#endif
#ifndef BLOCK
#error BLOCK must come from the build
#endif
__global__ void scale(float *a, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) a[i] *= 2.0f;
}
int main() { scale<<<4, BLOCK>>>(0, 64); return 0; }
"""


def test_only_the_default_targets_flags_are_read(tmp_path):
    (tmp_path / "Makefile").write_text(RODINIA_LIKE)
    flags = build_flags(tmp_path)
    assert flags.defines == ("BLOCK=16",)  # not clang's TIMING
    assert flags.include_dirs == () and flags.arch is None  # nor its -I../util and sm_20


def test_default_goal_follows_make():
    variables, rules = parse(".PHONY: all\nall: a\nb:\n\tx\n")
    assert default_goal(variables, rules) == "all"  # special targets are not goals
    variables, rules = parse("%.o: %.cu\n\tnvcc -c $<\nprog: p.o\n\tnvcc p.o\n")
    assert default_goal(variables, rules) == "prog"  # nor patterns
    variables, rules = parse(".DEFAULT_GOAL := fast\nslow:\n\tnvcc -DSLOW s.cu\nfast:\n\tnvcc -DFAST s.cu\n")
    assert default_goal(variables, rules) == "fast"
    assert "-DFAST" in default_build_text(".DEFAULT_GOAL := fast\nslow:\n\tnvcc -DSLOW s.cu\nfast:\n\tnvcc -DFAST s.cu\n")


def test_prerequisites_pattern_suffix_and_builtin_rules_are_followed(tmp_path):
    text = ("DEFS = -DA=1\nDEFS += -DB=2\nNVCCFLAGS = -Iinc\nCFLAGS = -DC_ONLY\n"
            "all: prog\nprog: k.o m.o h.o\n\t$(NVCC) -o $@ $^\n"
            "%.o: %.cu\n\t$(NVCC) $(NVCCFLAGS) $(DEFS) -c $<\n"
            ".c.o:\n\tgcc $(CFLAGS) -c $<\n"
            "debug: prog\n\t$(NVCC) -G -DDEBUG_ONLY x.cu\n")
    (tmp_path / "inc").mkdir()
    (tmp_path / "Makefile").write_text(text)
    flags = build_flags(tmp_path)
    assert flags.defines == ("A=1", "B=2", "C_ONLY")  # += appends; the debug target is not built
    assert flags.include_dirs == (str((tmp_path / "inc").resolve()),)
    # a prerequisite no rule of the file builds: make's own rule, with the conventional flag variables
    assert "-DC_ONLY" in default_build_text("CFLAGS = -DC_ONLY\nprog: main.o\n\tcc main.o\n")


def test_a_makefile_without_rules_gives_its_variables():
    assert "-DX=3" in default_build_text("NVCCFLAGS = -DX=3\n")


def test_the_unit_compiles_with_the_default_targets_define(tmp_path, monkeypatch, capsys, nvcc_toolchain):
    from cudalens.cli import main

    monkeypatch.setenv("CUDALENS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "Makefile").write_text(RODINIA_LIKE)
    (tmp_path / "gauss.cu").write_text(UNIT)
    assert main(["analyze", str(tmp_path / "gauss.cu"), "--format", "json"]) in (0, 1)
    d = json.loads(capsys.readouterr().out)
    (f,) = d["files"]
    assert f["compiled"] is True and f["compile_error"] is None, f
    kernel = next(k for k in d["kernels"] if k["name"] == "scale")
    assert kernel["block"] == [16, 1, 1]  # BLOCK from the default target's recipe
    assert Path(f["path"]).name == "gauss.cu"


def test_a_first_target_that_compiles_nothing_gives_way_to_all():
    text = "help:\n\t@echo 'make all'\nall: prog\nprog: p.cu\n\tnvcc -DTILE=32 p.cu -o prog\nfast:\n\tnvcc -DFAST p.cu\n"
    built = default_build_text(text)
    assert "-DTILE=32" in built and "-DFAST" not in built
    assert "-DFIRST" in default_build_text("first:\n\tnvcc -DFIRST p.cu\nall:\n\tnvcc -DALL p.cu\n")  # make's rule
