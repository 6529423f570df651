"""Accesses of __device__ functions inlined into a kernel (evidence.inlined_accesses): the compiled
model's lines of a helper (in a header or above the kernel) become access records of the kernel at
the helper's line, with the compiled figures, so the rules report them there."""

from __future__ import annotations

from cudalens.access.ptx_eval import LinePrediction
from cudalens.evidence.fill import fill_kernel
from cudalens.evidence.inlined_accesses import inlined_accesses
from cudalens.rules.context import RuleContext
from cudalens.rules.global_memory.g3_strided_global_access import strided_global_access
from cudalens.source.model import Kernel, Param, SourceModel

Q = "global load sectors/request"


class _Eval:
    def __init__(self, *preds):
        self.predictions = preds
        self.kernel = "halve"
        self.loops = ()


def _pred(file, line, sites, stride=8, value=8.0):
    return LinePrediction(kernel="halve", file=str(file), line=line, quantity=Q, value=value, ideal=4.0, width=4,
                          lane_stride=stride, lane_strides=(stride,), bytes_per_lane=4, call_sites=sites)


def _project(tmp_path):
    (tmp_path / "inc").mkdir()
    header = tmp_path / "inc" / "access.cuh"
    header.write_text("#pragma once\n__device__ inline float first(const float *p, int i) {\n"
                      "  return p[2 * i];\n}\n")
    unit = tmp_path / "halve.cu"
    unit.write_text('#include "inc/access.cuh"\n__global__ void halve(float *o, const float *in) {\n'
                    "  int i = threadIdx.x;\n  o[i] = first(in, i);\n}\n")
    kernel = Kernel("halve", str(unit), 2, 5, (Param("o", "float *", True, False, False),
                                                Param("in", "const float *", True, False, True)), False, None)
    return header, unit, kernel


def test_a_header_helper_line_becomes_an_access_of_the_kernel_at_the_header_line(tmp_path):
    header, unit, kernel = _project(tmp_path)
    evals = [_Eval(_pred(header, 3, ((str(unit), 4),)), _pred(unit, 4, (), stride=4, value=4.0))]
    (a,) = inlined_accesses(kernel, evals)
    assert (a.file, a.line, a.array, a.index, a.op) == (str(header), 3, "p", "2 * i", "load")
    assert (a.sectors_per_request, a.ideal_sectors_per_request, a.lane_stride, a.pattern) == (8.0, 4.0, 2, "strided-2")
    assert a.figure_notes == ("in a __device__ function inlined at halve.cu:4",)
    assert a.to_dict()["file"] == str(header)
    # a kernel given by a relative path shows the header relative the same way
    import os

    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        rel = Kernel(**{**kernel.__dict__, "file": "./halve.cu"})
        assert inlined_accesses(rel, evals)[0].file == "inc/access.cuh"
    finally:
        os.chdir(cwd)


def test_g3_reports_it_at_the_header_line_for_the_kernel(tmp_path):
    header, unit, kernel = _project(tmp_path)
    filled = fill_kernel(kernel, [_Eval(_pred(header, 3, ((str(unit), 4),)))])
    model = SourceModel(str(unit), unit.read_text(), (filled,), (), {}, (), ())
    (f,) = list(strided_global_access(RuleContext(source=model, rule="G3")))
    assert (f.file, f.line, f.kernel) == (str(header), 3, "halve")
    assert "p[2 * i] has lane stride 2 elements: 8 sectors per request" in f.message


def test_the_kernel_own_lines_and_toolkit_headers_give_none_a_coalesced_line_no_finding(tmp_path):
    header, unit, kernel = _project(tmp_path)
    own = _pred(unit, 4, ((str(unit), 4),))  # the kernel's own line: the source model's record has it
    no_call = _pred(header, 3, ())  # not inlined anywhere
    coalesced = _pred(header, 3, ((str(unit), 4),), stride=4, value=4.0)
    toolkit = _pred("/usr/local/cuda/include/sm_32_intrinsics.hpp", 100, ((str(unit), 4),))  # __ldg
    assert inlined_accesses(kernel, [_Eval(own, no_call)]) == ()
    (a,) = inlined_accesses(kernel, [_Eval(coalesced)])
    assert (a.sectors_per_request, a.pattern) == (4.0, "coalesced")
    model = SourceModel(str(unit), unit.read_text(), (fill_kernel(kernel, [_Eval(coalesced)]),), (), {}, (), ())
    assert list(strided_global_access(RuleContext(source=model, rule="G3"))) == []
    assert inlined_accesses(kernel, [_Eval(toolkit)]) == ()


def test_a_helper_above_the_kernel_in_its_own_file_keeps_the_kernel_file(tmp_path):
    unit = tmp_path / "halve.cu"
    unit.write_text("__device__ inline float first(const float *p, int i) {\n  return p[2 * i];\n}\n"
                    "__global__ void halve(float *o, const float *in) {\n  int i = threadIdx.x;\n"
                    "  o[i] = first(in, i);\n}\n")
    kernel = Kernel("halve", str(unit), 4, 7, (), False, None)
    (a,) = inlined_accesses(kernel, [_Eval(_pred(unit, 2, ((str(unit), 6),)))])
    assert (a.file, a.line, a.array, a.pattern) == (None, 2, "p", "strided-2") and "file" not in a.to_dict()
