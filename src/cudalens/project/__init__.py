"""The project: how the user's code is built (include folders, flags, compile_commands.json) and
its configuration (``[tool.cudalens]`` in pyproject.toml or cudalens.toml, found like ruff's).

    from cudalens.project import build_context, load_config
    ctx = build_context(["src/k.cu"], include_dirs=["include"], nvcc_flags=["-std=c++17"])
    ctx.nvcc_flags("src/k.cu"), ctx.header_macros("src/k.cu")
"""

from cudalens.project.compile_commands import Entry, load_compile_commands
from cudalens.project.config import Config, find_config, load_config
from cudalens.project.context import BuildContext, build_context, is_header

__all__ = ["BuildContext", "Config", "Entry", "build_context", "find_config", "is_header", "load_compile_commands",
           "load_config"]
