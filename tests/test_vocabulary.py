"""One name per idea across every command: the option vocabulary, checked on the commands as click
builds them (every command and sub-command, every parameter), so a new option that spells an
existing idea another way fails here.

Three checks:

* the table of ideas: each idea has one canonical name; the other spellings people reach for are
  listed, and no command may use them (no hidden aliases either: hidden options are walked too);
* an option has one long name (``--cold/--hot`` is one switch with its two sides, not two names);
* a short flag means the same long option in every command (``-o`` is ``--output`` everywhere).
"""

from __future__ import annotations

import click
import pytest

from cudalens.cli import cli

#: idea -> (canonical long name, spellings that must not appear as options)
IDEAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "file the report or results are written to": ("--output", ("--out", "--output-file", "--out-dir", "--outdir")),
    "a flag passed to nvcc": ("--nvcc-flag", ("--flag", "--flags", "--nvcc-flags", "--nvcc-option", "--compiler-flag")),
    "dynamic shared memory per block": ("--shared-mem", ("--shared", "--smem", "--dynamic-shared", "--shared-bytes")),
    "target compute capability": ("--cc", ("--arch", "--sm", "--compute-capability", "--target-cc")),
    "a preprocessor macro or parameter value": ("--define", ("--def", "--macro", "--defines")),
    "an include folder": ("--include-dir", ("--include", "--inc", "--include-path")),
    "processes working at once": ("--jobs", ("--procs", "--parallel", "--compile-jobs")),
    "noise target of the sampling": ("--noise", ("--noise-target", "--rel-noise")),
    "cold (L2 flushed) or hot timing": ("--cold", ("--mode", "--timing-mode", "--flush")),
    "output format": ("--format", ("--fmt", "--output-format")),
    "history database": ("--db", ("--database", "--history-db")),
}

#: short flag -> the long option it stands for, in every command that has it
SHORT: dict[str, str] = {"-o": "--output", "-D": "--define", "-I": "--include-dir", "-j": "--jobs", "-h": "--help"}


def _walk(group: click.Group, ctx: click.Context, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, f"{prefix}{name} is listed but cannot be loaded"
        out.append((prefix + name, cmd))
        if isinstance(cmd, click.Group):
            out += _walk(cmd, click.Context(cmd, parent=ctx), prefix + name + " ")
    return out


COMMANDS = _walk(cli, click.Context(cli))


def _options() -> list[tuple[str, click.Option]]:
    return [(name, p) for name, cmd in COMMANDS for p in cmd.params if isinstance(p, click.Option)]


def test_every_command_is_walked():
    names = {n for n, _ in COMMANDS}
    for expected in ("analyze", "check", "bench", "profile", "tune", "occupancy", "doctor", "lab run"):
        assert expected in names
    assert len(_options()) > 100  # every command's options, not a handful


@pytest.mark.parametrize("idea", sorted(IDEAS))
def test_one_name_per_idea(idea):
    canonical, others = IDEAS[idea]
    used = [(cmd, o) for cmd, p in _options() for o in (*p.opts, *p.secondary_opts) if o in others]
    assert not used, f"{idea}: spelled {canonical} by the vocabulary, but {used} use another name"
    assert any(canonical in p.opts for _, p in _options()), f"{idea}: no command uses {canonical}"


def test_an_option_has_one_long_name():
    """Two long names on one option are an alias (``-o/--out/--output``); a boolean switch's
    ``--x/--no-x`` (or ``--cold/--hot``) pair is one name for its two values."""
    doubled = [(cmd, p.opts) for cmd, p in _options() if len([o for o in p.opts if o.startswith("--")]) > 1]
    assert not doubled, f"options with two long names: {doubled}"


def test_a_short_flag_means_one_option_everywhere():
    seen: dict[str, set[str]] = {}
    for cmd, p in _options():
        longs = [o for o in p.opts if o.startswith("--")]
        for short in (o for o in (*p.opts, *p.secondary_opts) if not o.startswith("--")):
            seen.setdefault(short, set()).update(f"{o} ({cmd})" for o in longs)
            if short in SHORT:
                assert longs == [SHORT[short]], f"{cmd}: {short} is {longs}, elsewhere {SHORT[short]}"
    for short, longs in seen.items():
        assert len({entry.split(" ")[0] for entry in longs}) <= 1, f"{short} stands for {sorted(longs)}"


def test_cc_is_resolved_the_same_way_by_every_target_command():
    """``--cc`` has one default and one help (hardware.target: option, [tool.cudalens] cc, the GPU's,
    else 9.0) wherever it names the target; ``device --cc`` shows a table row instead (its own help)."""
    from cudalens.hardware.target import CC_HELP

    targets = [(cmd, p) for cmd, p in _options() if "--cc" in p.opts and cmd != "device"]
    assert {cmd for cmd, _ in targets} >= {"analyze", "check", "occupancy", "profile", "tune"}
    for cmd, p in targets:
        assert p.default is None and not p.required and p.help == CC_HELP, cmd


def test_bench_and_tune_take_the_same_arg_specs_through_one_parser(tmp_path, monkeypatch, capsys):
    """One launch grammar: ``--arg float32[{n}]`` is sized by bench's ``--axis`` value and by tune's
    ``--const`` alike, through measure.argspec.parse_args; a placeholder nothing defines, or one
    naming a tuned parameter (every configuration gets the same buffers), is one line and exit 2."""
    import cudalens.measure.isolate as isolate
    import cudalens.tune as tune_pkg
    from cudalens.cli import main
    from cudalens.errors import InputError

    src = tmp_path / "k.cu"
    src.write_text("template <int B> __global__ void k(float *x, int n) { int i = blockIdx.x * B + threadIdx.x;"
                   " if (i < n) x[i] = 0.0f; }\n")
    seen: dict[str, list[str]] = {}

    def stop(what):
        def capture(*a, **kw):
            seen[what] = list(kw["args"]) if what == "tune" else list(a[0]["args"])
            raise InputError("captured")
        return capture

    monkeypatch.setattr(isolate, "run_isolated", stop("bench"))
    monkeypatch.setattr(tune_pkg, "tune", stop("tune"))
    specs = ["--arg", "float32[{n}*2]:zeros", "--arg", "int32={n}"]
    assert main(["bench", str(src), "--kernel", "k<256>", "--grid", "{n}/256", "--block", "256",
                 "--axis", "n=4096", *specs]) == 2
    tune = ["tune", str(src), "--kernel", "k<B>", "--space", "B=128,256", "--grid", "n/B", "--block", "B", "--fake", "{}"]
    assert main([*tune, "--const", "n=4096", *specs]) == 2
    assert seen["tune"] == seen["bench"] == ["float32[4096*2]:zeros", "int32=4096"]
    capsys.readouterr()
    assert main([*tune, "--const", "n=4096", "--arg", "float32[{B}]", "--arg", "int32=1"]) == 2
    assert "{B} is a tuned parameter" in capsys.readouterr().err
    assert main([*tune, "--const", "n=4096", "--arg", "float32[{m}]", "--arg", "int32=1"]) == 2
    err = capsys.readouterr().err
    assert "{m} is not a --const (constants: n)" in err and "Traceback" not in err
    assert main([*tune, "--const", "n=4096", "--arg", "float32[n]"]) == 2  # the bench grammar's own errors
    assert "element count 'n' is not an integer" in capsys.readouterr().err
