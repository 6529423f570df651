"""header_facts keeps its answer per (file, macros, the file's text), bounded, and never stale: a
header that changes, or one that appears where the file looked for it, is read again."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from cudalens.source import parse as parse_mod
from cudalens.source import type_facts
from cudalens.source.type_facts import header_facts

HEADER = """#if defined(USE_HALF)
typedef half floatX;
#else
typedef float floatX;
#endif
struct Vec { static constexpr int size = 4; };
"""
UNIT = '#include "common.h"\n#include "later.h"\n__global__ void k(floatX *o) { o[threadIdx.x] = 0; }\n'


@pytest.fixture()
def unit(tmp_path: Path) -> Path:
    (tmp_path / "common.h").write_text(HEADER)
    path = tmp_path / "k.cu"
    path.write_text(UNIT)
    return path


@pytest.fixture()
def header_parses(monkeypatch) -> list[str]:
    """The headers parsed from here on (header_facts parses a header through parse.parse_tree)."""
    seen: list[str] = []
    real = parse_mod.parse_tree

    def counted(data: bytes):
        seen.append(data.decode()[:40])
        return real(data)

    monkeypatch.setattr(parse_mod, "parse_tree", counted)
    return seen


def _facts(path: Path, defined: set[str] | None = None):
    root = parse_mod.parse_tree(path.read_bytes()).root_node
    return header_facts(str(path), root, defined if defined is not None else set())


def test_asked_again_the_headers_are_not_read_again(unit, header_parses):
    first = _facts(unit)
    parses = len(header_parses)
    assert parses == 2  # the unit here, then common.h (later.h does not exist)
    again = _facts(unit)
    assert again is first and len(header_parses) == parses + 1  # only the unit itself, parsed by _facts
    assert first.typedefs["floatX"] == "float" and first.statics[("Vec", "size")] == ((), "4")


def test_a_header_two_units_include_is_parsed_once(unit, header_parses):
    other = unit.parent / "other.cu"
    other.write_text('#include "common.h"\n__global__ void j(floatX *o) { o[0] = 1; }\n')
    assert _facts(unit).typedefs["floatX"] == _facts(other).typedefs["floatX"] == "float"
    assert sum(p.startswith("#if defined(USE_HALF)") for p in header_parses) == 1


def test_other_macros_are_another_answer(unit):
    assert _facts(unit).typedefs["floatX"] == "float"
    assert _facts(unit, {"USE_HALF"}).typedefs["floatX"] == "half"
    assert _facts(unit).typedefs["floatX"] == "float"


def test_a_header_changed_in_place_is_read_again(unit):
    header = unit.parent / "common.h"
    assert _facts(unit).typedefs["floatX"] == "float"
    st = os.stat(header)
    header.write_text(HEADER.replace("typedef float floatX;", "typedef int4  floatX;"))  # the same size
    assert os.stat(header).st_size == st.st_size
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _facts(unit).typedefs["floatX"] == "int4"


def test_a_header_that_appears_is_read(unit):
    assert "extra" not in _facts(unit).typedefs
    (unit.parent / "later.h").write_text("typedef double extra;\n")
    assert _facts(unit).typedefs["extra"] == "double"


def test_the_files_own_text_is_part_of_the_key(unit):
    assert "own" not in _facts(unit).typedefs
    unit.write_text(UNIT + "typedef short own;\n")
    assert _facts(unit).typedefs["own"] == "short"


def test_the_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(type_facts, "_CACHE_SIZE", 3)
    for i in range(6):
        path = tmp_path / f"u{i}.cu"
        path.write_text(f"typedef float t{i};\n")
        assert _facts(path).typedefs == {f"t{i}": "float"}
        assert len(type_facts._CACHE) <= 3
    assert len(type_facts._CACHE) == 3


def test_the_kept_facts_cannot_be_changed(unit):
    facts = _facts(unit)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.typedefs = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        facts.typedefs["floatX"] = "double"  # type: ignore[index]
    assert _facts(unit).typedefs["floatX"] == "float"


BRANCHY = """#if defined(USE_HALF) && !defined(NO_HALF)
typedef half floatX;
#elif defined(USE_BF16)
typedef __nv_bfloat16 floatX;
#ifdef WIDE
typedef double acc_t;
#endif
#else
typedef float floatX;
#endif
#ifndef WIDE
typedef float acc_t;
#endif
#if SOME_VALUE > 2
typedef int maybe_t;
#endif
template <class T> struct Packed { static constexpr int size = 16 / sizeof(T); };
namespace ns { struct Tile { static const int rows = 8; }; }
"""


def test_a_header_walk_kept_per_answer_gives_the_facts_walked_afresh(tmp_path):
    """header_facts keeps what a header's walk adds per answer its #if branches got: each unit's facts are
    those of a walk of every header afresh, whatever macros the units before it had."""
    (tmp_path / "common.h").write_text(BRANCHY)
    macro_sets = [set(), {"USE_HALF"}, {"USE_HALF", "NO_HALF"}, {"USE_BF16"}, {"USE_BF16", "WIDE"}, {"WIDE"},
                  {"USE_HALF", "OTHER"}, set(), {"USE_BF16", "WIDE"}]
    type_facts._WALKS.clear()
    units = []
    for i, defined in enumerate(macro_sets):
        unit = tmp_path / f"u{i}.cu"
        unit.write_text(f'#include "common.h"\ntypedef char own{i};\n')
        root = parse_mod.parse_tree(unit.read_bytes()).root_node
        units.append((unit, root, defined, header_facts(str(unit), root, defined)))
    (walks,) = type_facts._WALKS.values()
    assert len(walks) == 6  # set(), {USE_HALF, OTHER} and {USE_BF16, WIDE} again: the walks kept
    for unit, root, defined, kept in units:
        type_facts._WALKS.clear()
        fresh, _read = type_facts._read_facts(str(unit), root, defined)
        assert kept == fresh, defined
