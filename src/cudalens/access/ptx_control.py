"""Control dependence on the compiled code: which instructions a conditional branch decides (from
post-dominators on the basic-block graph of cudalens.access.ptx_exec.basic_blocks). The warp access
model on PTX (cudalens.access.ptx_eval) uses it to name the loaded value a figure depends on when
the figure's instructions run under a branch on that value.

Pure functions of a parsed function.
"""

from __future__ import annotations

from typing import Mapping

from cudalens.access.ptx_exec import basic_blocks
from cudalens.compiled.ptx import Function


def transitive(cd: Mapping[int, set[int]]) -> dict[int, set[int]]:
    """Control dependence closed over nested branches: a branch decides also what the branches it
    decides decide (a loop inside an if runs only for the lanes the if let in)."""
    out: dict[int, set[int]] = {}
    for b, region in cd.items():
        seen = set(region)
        stack = [x for x in region if x in cd and x != b]
        done = {b}
        while stack:
            x = stack.pop()
            if x in done:
                continue
            done.add(x)
            new = cd[x] - seen
            seen |= new
            stack += [y for y in new if y in cd]
        out[b] = seen
    return out


def deciding(fn: Function, cd: Mapping[int, set[int]]) -> dict[int, tuple[int, ...]]:
    """Basic block -> the conditional branches that decide whether it runs (from ``cd``, usually
    :func:`transitive` of :func:`control_dependent`)."""
    block_of = {s: k for k, (s, _e) in enumerate(basic_blocks(fn))}
    out: dict[int, list[int]] = {}
    for b, region in cd.items():
        for i in region:
            if i in block_of:
                out.setdefault(block_of[i], []).append(b)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def control_dependent(fn: Function) -> dict[int, set[int]]:
    """Branch instruction index -> the instruction indices whose execution it decides (control
    dependence on the basic-block graph, from post-dominators)."""
    blocks = basic_blocks(fn)
    nb = len(blocks)
    start_of = {s: k for k, (s, _e) in enumerate(blocks)}
    succ: list[set[int]] = []
    for k, (_s, e) in enumerate(blocks):
        last = fn.instructions[e - 1]
        out: set[int] = set()
        if last.base == "bra":
            t = start_of.get(fn.labels.get(last.operands[0].strip(), -1)) if last.operands else None
            if t is not None:
                out.add(t)
            if last.pred:
                out.add(k + 1)
        elif last.base not in ("ret", "exit") or last.pred:
            out.add(k + 1)
        succ.append({x if x < nb else nb for x in out} or {nb})
    exit_node = nb
    pdom: list[set[int]] = [set(range(nb + 1)) for _ in range(nb)] + [{exit_node}]
    changed = True
    while changed:
        changed = False
        for k in range(nb - 1, -1, -1):
            inter = set.intersection(*(pdom[s] for s in succ[k])) if succ[k] else set()
            new = inter | {k}
            if new != pdom[k]:
                pdom[k], changed = new, True
    ipdom: dict[int, int] = {}
    for k in range(nb):
        strict = pdom[k] - {k}
        # strict postdominators form a chain: the immediate one is postdominated by all the others
        ipdom[k] = max(strict, key=lambda c: len(pdom[c])) if strict else exit_node
    out_map: dict[int, set[int]] = {}
    for k, (_s, e) in enumerate(blocks):
        last = fn.instructions[e - 1]
        if last.base != "bra" or not last.pred:
            continue
        dep: set[int] = set()
        for sblk in succ[k]:
            node = sblk
            seen = 0
            while node != ipdom[k] and node != exit_node and seen <= nb:
                dep.add(node)
                node = ipdom.get(node, exit_node)
                seen += 1
        out_map[last.index] = {i for b in dep for i in range(*blocks[b])}
    return out_map
