"""Build-context options shared by `analyze`, `check` and `bench`: -I, --nvcc-flag,
--compile-commands, --no-config (the configuration is ``[tool.cudalens]``, see cudalens.project)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click


def build_options(fn: Callable) -> Callable:
    """Decorate a click command with the build-context options (parameters ``include_dirs``,
    ``nvcc_flags``, ``compile_commands``, ``no_config``, ``trust_flags``)."""
    options = [
        click.option("-I", "--include-dir", "include_dirs", multiple=True, metavar="DIR",
                     help="Include folder for the compiler and for the project headers the model reads (repeatable)."),
        click.option("--nvcc-flag", "nvcc_flags", multiple=True, metavar="FLAG",
                     help="A flag passed to nvcc as given, e.g. --nvcc-flag=-std=c++17 (repeatable). Flags holding "
                          "shell characters are refused; -D/-I values are passed safely."),
        click.option("-p", "--compile-commands", "compile_commands", default=None, metavar="FILE|DIR",
                     help="compile_commands.json (CMake CMAKE_EXPORT_COMPILE_COMMANDS, Bear), or the build folder "
                          "holding it (-p build, as clang-tidy has it): each listed file is compiled with its own "
                          "recorded flags. Default: compile_commands.json or build/compile_commands.json at the "
                          "project's root, else the -D/-I its Makefile or CMakeLists.txt states plainly."),
        click.option("--no-config", "no_config", is_flag=True,
                     help="Ignore [tool.cudalens] in pyproject.toml / cudalens.toml."),
        click.option("--trust-project-flags", "trust_flags", is_flag=True,
                     help="Allow nvcc flags that name a program (-ccbin, -Xcompiler -wrapper/-B/-fplugin/-specs, "
                          "-Xlinker ...) from [tool.cudalens], compile_commands.json, options files and "
                          "--nvcc-flag; without it they are refused."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def make_build(paths: Iterable[str], include_dirs: Iterable[str] = (), nvcc_flags: Iterable[str] = (),
               compile_commands: str | None = None, no_config: bool = False, trust_flags: bool = False) -> Any:
    """The BuildContext for ``paths`` from the options (InputError names a bad one); a key of the
    configuration that nothing reads is a warning on standard error (as analyze and check give it)."""
    import click

    from cudalens.api.analysis import config_warnings
    from cudalens.project import build_context
    from cudalens.project.config import Config, load_config

    paths = list(paths)
    config = Config() if no_config else load_config(paths or ["."])
    for warning in config_warnings(config):
        click.echo(f"cudalens: warning: {warning}", err=True)
    return build_context(paths, include_dirs=list(include_dirs), nvcc_flags=list(nvcc_flags),
                         compile_commands=compile_commands, use_config=not no_config, trust_flags=trust_flags,
                         config=config)
