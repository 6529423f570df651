"""The search space: named parameters with their values, restrictions, and the configurations.

``--space BM=32,64,128`` lists values; ``--space BK=8:32:x2`` is a geometric range (8, 16, 32) and
``--space U=1:4:+1`` an arithmetic one (1, 2, 3, 4): the range grammar of ``bench --axis``
(:func:`cudalens.measure.axes.parse_range`; numbers may be written ``2^k``). Values are integers
(template arguments and ``-D`` defines are whole numbers in every kernel we tune). Restrictions are
expressions (:mod:`cudalens.tune.expr`) over the parameters and constants; a configuration is in
the space when every restriction holds.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from cudalens.errors import InputError
from cudalens.tune import expr as E

MAX_CONFIGS = 100_000
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Param:
    name: str
    values: tuple[int, ...]


@dataclass(frozen=True)
class Config:
    """One point of the space, parameters in the space's order."""

    items: tuple[tuple[str, int], ...]

    @property
    def key(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.items)

    def as_dict(self) -> dict[str, int]:
        return dict(self.items)

    @classmethod
    def from_key(cls, key: str) -> Config:
        items = []
        for part in key.split(","):
            k, _, v = part.partition("=")
            items.append((k, int(v)))
        return cls(tuple(items))


def _int(text: str, where: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise InputError(f"{where}: {text.strip()!r} is not a whole number") from None


def parse_param(text: str) -> Param:
    """``"BM=32,64,128"`` / ``"BK=8:32:x2"`` / ``"U=1:4:+1"`` -> Param; InputError naming the option."""
    from cudalens.measure.axes import is_range, number, parse_range

    where = f"--space {text!r}"
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep or not _NAME.match(name):
        raise InputError(f"{where}: write NAME=V1,V2,... or NAME=START:STOP:STEP (e.g. BK=8:32:x2)")
    rest = rest.strip()
    if ".." in rest:
        raise InputError(f"{where}: write a range as START:STOP:STEP (e.g. BK=8:32:x2 or U=1:4:+1), "
                         "the grammar of every command")
    if is_range(rest):
        values = list(parse_range(rest, where))
    else:
        values = [number(t, where) for t in rest.split(",") if t.strip()]
    if not values:
        raise InputError(f"{where}: no values")
    if len(set(values)) != len(values):
        raise InputError(f"{where}: a value is listed twice")
    return Param(name, tuple(values))


@dataclass(frozen=True)
class Space:
    """Parameters (in order), constants and restrictions."""

    params: tuple[Param, ...]
    constants: tuple[tuple[str, int], ...] = ()
    restrictions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.params] + [c for c, _ in self.constants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"the name {dup[0]!r} is given twice (a parameter or constant)")
        if not self.params:
            raise InputError("the space has no parameters: give at least one --space NAME=values")
        for r in self.restrictions:  # validates them now, so bad text fails before any compile
            E.parse(r, set(names), what="restriction")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def full_size(self) -> int:
        n = 1
        for p in self.params:
            n *= len(p.values)
        return n

    def env(self, config: Config) -> dict[str, int]:
        return {**dict(self.constants), **config.as_dict()}

    def violated(self, config: Config) -> str | None:
        """The first restriction ``config`` breaks, or None."""
        env = self.env(config)
        for text in self.restrictions:
            if not E.parse(text, set(env), what="restriction").holds(env):
                return text
        return None

    def configs(self) -> Iterator[Config]:
        """Every configuration that satisfies the restrictions, in row-major order of the values."""
        if self.full_size > MAX_CONFIGS * 10:
            raise InputError(f"the space has {self.full_size} points before restrictions; the limit is {MAX_CONFIGS * 10}")
        parsed = [E.parse(r, set(self.names) | {c for c, _ in self.constants}, what="restriction")
                  for r in self.restrictions]
        consts = dict(self.constants)
        count = 0
        for values in itertools.product(*(p.values for p in self.params)):
            cfg = Config(tuple(zip(self.names, values)))
            env = {**consts, **cfg.as_dict()}
            if all(r.holds(env) for r in parsed):
                count += 1
                if count > MAX_CONFIGS:
                    raise InputError(f"more than {MAX_CONFIGS} configurations satisfy the restrictions")
                yield cfg

    def to_dict(self) -> dict:
        return {"params": {p.name: list(p.values) for p in self.params}, "constants": dict(self.constants),
                "restrictions": list(self.restrictions)}


def parse_constant(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not _NAME.match(name.strip()):
        raise InputError(f"--const {text!r}: write NAME=INTEGER")
    return name.strip(), _int(value, f"--const {text!r}")


def make_space(params: Sequence[str] | Mapping[str, Sequence[int]], restrictions: Sequence[str] = (),
               constants: Sequence[str] | Mapping[str, int] = ()) -> Space:
    """A Space from CLI strings (``["BM=32,64"]``) or a mapping (``{"BM": [32, 64]}``) - the Python API."""
    if isinstance(params, Mapping):
        ps = tuple(Param(str(k), tuple(int(v) for v in vals)) for k, vals in params.items())
    else:
        ps = tuple(parse_param(t) for t in params)
    if isinstance(constants, Mapping):
        cs = tuple((str(k), int(v)) for k, v in constants.items())
    else:
        cs = tuple(parse_constant(t) for t in constants)
    return Space(ps, cs, tuple(restrictions))
