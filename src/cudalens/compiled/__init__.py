"""The compiled layer: what nvcc/ptxas made of a kernel (resources, SASS facts), no GPU needed.

Public API::

    from cudalens.compiled import compile_file
    result = compile_file("k.cu", cc="9.0", defines={"N": "256"})
    k = result.kernels["saxpy"]
    k.resources_dict(), k.sass_counts, k.sass_by_line
"""

from cudalens.compiled.compile import compile_file
from cudalens.compiled.fatbin import FatbinContents, inspect_binary
from cudalens.compiled.model import CompiledKernel, CompileError, CompileResult, CompilerMessage, Resources
from cudalens.compiled.toolchain import Tool, Toolchain, discover

__all__ = [
    "compile_file",
    "inspect_binary",
    "FatbinContents",
    "CompiledKernel",
    "CompileError",
    "CompileResult",
    "CompilerMessage",
    "Resources",
    "Tool",
    "Toolchain",
    "discover",
]

