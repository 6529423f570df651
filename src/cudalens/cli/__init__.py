"""The `cudalens` command. Thin: parse arguments, call the library, render.

Every sub-command lives in its own module of this package and exposes ``register(group)``;
modules are discovered, so adding a command never edits this file.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from cudalens import __version__
from cudalens.errors import CudalensError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cudalens")
def cli() -> None:
    """What limits a CUDA kernel, how far it is from the hardware, what to change first."""


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(cli)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Entry point: one line and exit code 2 for every user error, never a traceback."""
    try:
        result = cli.main(args=argv, prog_name="cudalens", standalone_mode=False)
    except click.UsageError as exc:
        where = f" ({exc.ctx.command_path})" if exc.ctx is not None else ""
        click.echo(f"cudalens: error{where}: {exc.format_message()}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"cudalens: error: {exc.format_message()}", err=True)
        return 2
    except click.Abort:
        click.echo("cudalens: aborted", err=True)
        return 130
    except CudalensError as exc:
        click.echo(f"cudalens: error: {exc}", err=True)
        return 2
    except FileNotFoundError as exc:
        click.echo(f"cudalens: error: {exc.filename or exc}: no such file", err=True)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `cudalens ... | head`
        return 0
    if isinstance(result, int):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
