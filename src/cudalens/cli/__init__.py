"""The `cudalens` command. Thin: parse arguments, call the library, render.

Every sub-command lives in its own module of this package and exposes ``register(group)``.
Commands load lazily: ``cudalens profile ...`` imports only ``cli/profile.py``, not every command's
module (and their numpy, tree-sitter, CUDA bindings...), so a command starts in a fraction of the
time. :data:`COMMANDS` names the module of each command, for loading it without importing the
others; a module missing from it is still discovered (imported when the commands are listed), and
``tests/trace/test_cli_lazy.py`` checks the table against what the modules register.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from cudalens._version import __version__
from cudalens.errors import CudalensError

#: command name -> the module of this package that registers it
COMMANDS: dict[str, str] = {
    "analyze": "analyze", "assess": "assess", "offload": "assess", "speedup": "assess", "bandwidth": "bandwidth",
    "bench": "bench", "cache": "cache", "check": "check", "device": "device", "doctor": "doctor", "history": "history",
    "compare": "history", "lab": "lab", "occupancy": "occupancy", "profile": "profile", "rules": "rules",
    "tune": "tune",
}


def registered_by(module_name: str) -> dict[str, click.Command]:
    """The commands that ``cudalens.cli.<module_name>`` registers (imports that module only)."""
    module = importlib.import_module(f"{__name__}.{module_name}")
    register = getattr(module, "register", None)
    scratch = click.Group()
    if register is not None:
        register(scratch)
    return dict(scratch.commands)


class LazyGroup(click.Group):
    """A group whose commands are imported when first used (click's lazy-loading pattern)."""

    def _load_module(self, module_name: str) -> None:
        for name, cmd in registered_by(module_name).items():
            self.commands.setdefault(name, cmd)

    def _discover(self) -> None:
        """Modules not named in COMMANDS: loaded eagerly, so a new command works before it is listed."""
        if getattr(self, "_discovered", False):
            return
        self._discovered = True
        known = set(COMMANDS.values())
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if not info.name.startswith("_") and info.name not in known:
                self._load_module(info.name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._discover()
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in COMMANDS:
                self._load_module(COMMANDS[cmd_name])
            else:
                self._discover()
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cudalens")
def cli() -> None:
    """What limits a CUDA kernel, how far it is from the hardware, what to change first."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: one line and exit code 2 for every user error, never a traceback."""
    from cudalens.textio import printable

    try:
        result = cli.main(args=argv, prog_name="cudalens", standalone_mode=False)
    except click.UsageError as exc:
        where = f" ({exc.ctx.command_path})" if exc.ctx is not None else ""
        click.echo(printable(f"cudalens: error{where}: {exc.format_message()}"), err=True)
        return 2
    except click.ClickException as exc:
        click.echo(printable(f"cudalens: error: {exc.format_message()}"), err=True)
        return 2
    except click.Abort:
        click.echo("cudalens: aborted", err=True)
        return 130
    except CudalensError as exc:
        click.echo(printable(f"cudalens: error: {exc}"), err=True)
        return 2
    except FileNotFoundError as exc:
        click.echo(printable(f"cudalens: error: {exc.filename or exc}: no such file"), err=True)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `cudalens ... | head`
        return 0
    if isinstance(result, int):
        return result
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
