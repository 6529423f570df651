"""`cudalens cache info|clean`: the cache folder of compiles and whole file analyses.

One folder (``$CUDALENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cudalens``, else ``~/.cache/cudalens``):
the compile cache (:mod:`cudalens.compiled.cache`) and the result cache
(:mod:`cudalens.pipeline.result_cache`), which ``check`` and ``analyze`` read unless ``--no-cache``.
"""

from __future__ import annotations

import click

no_cache_option = click.option(
    "--no-cache", "no_cache", is_flag=True,
    help="Analyse every file again: neither read nor write the result cache (also: CUDALENS_NO_CACHE=1; "
         "see `cudalens cache info`).")


def result_cache(no_cache: bool):
    """The result cache a command uses (None with ``--no-cache`` or ``$CUDALENS_NO_CACHE`` set)."""
    import os

    if no_cache or os.environ.get("CUDALENS_NO_CACHE", "") not in ("", "0"):
        return None
    from cudalens.pipeline.result_cache import ResultCache

    return ResultCache()


def register(group: click.Group) -> None:
    @group.group("cache")
    def cache_group() -> None:
        """The cache of compiles and analyses (one folder; persist it in CI to keep `check` warm)."""

    @cache_group.command("info")
    def info_cmd() -> None:
        """Where the cache is, and how many entries it holds."""
        from cudalens.pipeline.result_cache import info

        d = info()
        click.echo(f"cache folder: {d['path']}")
        click.echo(f"compiles: {d['compiles_files']} files, {d['compiles_bytes'] / 2**20:.1f} MiB")
        click.echo(f"analyses: {d['results_files']} files, {d['results_bytes'] / 2**20:.1f} MiB")

    @cache_group.command("clean")
    def clean_cmd() -> None:
        """Remove every compile and analysis stored in the cache."""
        from cudalens.pipeline.result_cache import clean, info

        removed = clean()
        click.echo(f"removed {removed} files from {info()['path']}")
