"""The part of a Makefile that the default build runs, read as plain text (make is never run).

A Makefile often holds several ways of building the same program (``release``, ``debug``, a
``clang`` target with ``-DTIMING``...): the flags that matter are those of the target ``make``
builds with no argument. :func:`default_build_text` returns the recipes of that goal
(``.DEFAULT_GOAL``, else the first target that is not special or a pattern) and of everything it
depends on, through explicit rules, pattern rules (``%.o: %.cu``) and suffix rules (``.cu.o:``);
where a prerequisite has no rule of the file (make's built-in rules build it) the conventional flag
variables (``CPPFLAGS``, ``CFLAGS``, ``CXXFLAGS``, ``NVCCFLAGS``, ``CUDAFLAGS``) stand for its
recipe. Variables are substituted where they are set to plain text. A Makefile without a rule gives
its whole text (its variables are all there is to read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_DIRECTIVES = ("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "-include", "sinclude", "define",
               "endef", "export", "unexport", "override", "vpath", "undefine", "private")
_ASSIGN = re.compile(r"^(?:export[ \t]+|override[ \t]+)?(\.?[A-Za-z_][\w.]*)[ \t]*(::?:?|[?+!])?=[ \t]*(.*?)[ \t]*$")
_RULE = re.compile(r"^([^:=#\t][^:=#]*?)[ \t]*::?(?!=)[ \t]*(.*)$")
_IMPLICIT_VARS = ("CPPFLAGS", "CFLAGS", "CXXFLAGS", "NVCCFLAGS", "CUDAFLAGS")


@dataclass(frozen=True)
class Rule:
    targets: tuple[str, ...]
    prerequisites: tuple[str, ...]
    recipe: tuple[str, ...]


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """``$(NAME)`` and ``${NAME}`` replaced by their plain values, a few levels deep."""
    for _ in range(4):
        new = re.sub(r"\$[({]([A-Za-z_][\w.]*)[)}]", lambda m: variables.get(m.group(1), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


def parse(text: str) -> tuple[dict[str, str], list[Rule]]:
    """Variables (the first assignment of each, and what ``+=`` appends) and rules of a Makefile's text."""
    text = re.sub(r"\\\r?\n", " ", text)
    variables: dict[str, str] = {}
    rules: list[Rule] = []
    current: tuple[tuple[str, ...], tuple[str, ...], list[str]] | None = None
    for raw in text.splitlines():
        if raw.startswith("\t"):
            if current is not None:
                current[2].append(raw.strip())
            continue
        line = re.sub(r"(?<!\\)#.*", "", raw).strip()
        if not line:
            continue
        if current is not None:
            rules.append(Rule(current[0], current[1], tuple(current[2])))
            current = None
        word = line.split()[0]
        m = _ASSIGN.match(line)
        if m:  # the first value set, with what ``+=`` appends to it
            name, op, value = m.groups()
            if op == "+" and name in variables:
                variables[name] = f"{variables[name]} {value}".strip()
            else:
                variables.setdefault(name, value)
            continue
        if word in _DIRECTIVES:
            continue
        r = _RULE.match(line)
        if r is None:
            continue
        targets = tuple(r.group(1).split())
        rest = r.group(2)
        if "=" in rest.partition(";")[0]:  # a target-specific variable
            continue
        prereqs, _sep, inline = rest.partition(";")
        current = (targets, tuple(prereqs.replace("|", " ").split()), [inline.strip()] if inline.strip() else [])
    if current is not None:
        rules.append(Rule(current[0], current[1], tuple(current[2])))
    return variables, rules


def default_goal(variables: Mapping[str, str], rules: list[Rule]) -> str | None:
    """The target ``make`` builds with no argument."""
    if variables.get(".DEFAULT_GOAL"):
        return variables[".DEFAULT_GOAL"].split()[0]
    for rule in rules:
        for t in rule.targets:
            if "%" not in t and (not t.startswith(".") or "/" in t):
                return t
    return None


def _pattern_match(pattern: str, name: str) -> bool:
    head, _pct, tail = pattern.partition("%")
    return len(name) > len(head) + len(tail) and name.startswith(head) and name.endswith(tail)


def _suffix_target(t: str) -> str | None:
    """``.cu.o`` (a suffix rule) -> ``.o``; None for another target."""
    parts = t.split(".")
    return "." + parts[2] if len(parts) == 3 and not parts[0] and parts[1] and parts[2] else None


def default_build_text(text: str) -> str:
    """The recipes the default goal runs, variables substituted (see the module docstring); where
    those compile nothing (a ``help`` or ``clean`` target written first), those of ``all``."""
    variables, rules = parse(text)
    goal = default_goal(variables, rules)
    if goal is None:
        return substitute(re.sub(r"#[^\n]*", "", re.sub(r"\\\r?\n", " ", text)), variables)
    explicit: dict[str, list[Rule]] = {}
    patterns: list[Rule] = []
    for rule in rules:
        for t in rule.targets:
            t = substitute(t, variables)
            if "%" in t or _suffix_target(t):
                patterns.append(rule)
            else:
                explicit.setdefault(t, []).append(rule)
    out = _recipes(goal, explicit, patterns, variables)
    if goal != "all" and "all" in explicit and not _COMPILES.search(out):
        out = _recipes("all", explicit, patterns, variables)
    return out


_COMPILES = re.compile(r"nvcc|\.cu\b|\bclang|\+\+|\bgcc\b|\$[({](?:N?VCC|CC|CXX|CUDACXX)[)}]", re.IGNORECASE)


def _recipes(goal: str, explicit: Mapping[str, list[Rule]], patterns: list[Rule], variables: Mapping[str, str]) -> str:
    """The recipe lines that building ``goal`` runs, variables substituted."""
    chunks: list[str] = []
    seen: set[str] = set()
    todo = [goal]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        own = explicit.get(name, [])
        for rule in own:
            chunks += rule.recipe
            todo += [p for p in substitute(" ".join(rule.prerequisites), variables).split() if p not in seen]
        if any(rule.recipe for rule in own):
            continue
        matched = [r for r in patterns if any(_pattern_match(substitute(t, variables), name) if "%" in t
                                              else name.endswith(_suffix_target(t) or "\0") for t in r.targets)]
        for rule in matched:
            chunks += rule.recipe
        if not matched and not own and name.endswith((".o", ".obj")):  # built by make's own rules
            chunks += [variables.get(v, "") for v in _IMPLICIT_VARS]
    return substitute("\n".join(chunks), variables)
