"""Control dependence on the compiled code: which instructions a conditional branch decides (from
post-dominators on the basic-block graph of cudalens.compiled.ptx.Function.blocks). The warp access
model on PTX (cudalens.access.ptx_eval) uses it to name the loaded value a figure depends on when
the figure's instructions run under a branch on that value.

Pure functions of a parsed function.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

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
    block_of = {s: k for k, (s, _e) in enumerate(fn.blocks)}
    out: dict[int, list[int]] = {}
    for b, region in cd.items():
        for i in region:
            if i in block_of:
                out.setdefault(block_of[i], []).append(b)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def control_dependent(fn: Function) -> dict[int, set[int]]:
    """Branch instruction index -> the instruction indices whose execution it decides (control
    dependence on the basic-block graph, from post-dominators)."""
    return _decided(fn.blocks, _sides(fn, fn.blocks))


def _decided(blocks: Sequence[tuple[int, int]], by_side: Mapping[int, Mapping[int, set[int]]]) -> dict[int, set[int]]:
    return {b: {i for side in sides.values() for blk in side for i in range(*blocks[blk])}
            for b, sides in by_side.items()}


def control_and_sides(fn: Function) -> tuple[dict[int, set[int]], dict[int, tuple[frozenset[int], frozenset[int]]]]:
    """(:func:`transitive` of :func:`control_dependent`, :func:`branch_sides`), the graph walked once."""
    blocks = fn.blocks
    by_side = _sides(fn, blocks)
    cd = transitive(_decided(blocks, by_side))
    return cd, branch_sides(fn, cd, (blocks, by_side))


def branch_sides(fn: Function, cd: Mapping[int, set[int]], graph: tuple | None = None
                 ) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
    """Conditional branch -> (the instructions it decides on its taken side, on its fall-through
    side), nested branches' regions included (``cd``: :func:`transitive` of
    :func:`control_dependent`), for the branches whose sides hold no loop: the short sides ptxas
    may turn into predicated code, which every warp that reaches the branch executes. Only branches
    whose sides hold a shared access are listed."""
    shared = {i.index for i in fn.instructions if i.base in ("ld", "st") and "shared" in i.parts}
    if not shared:  # only shared figures are averaged the way ncu counts predicated executions
        return {}
    blocks, by_side = graph if graph is not None else (fn.blocks, None)
    by_side = by_side if by_side is not None else _sides(fn, blocks)
    start_of = {s: k for k, (s, _e) in enumerate(blocks)}
    backs = {ins.index for ins in fn.instructions if ins.base == "bra" and _back(fn, ins.index)}  # loops' back edges
    out: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
    for b, sides in by_side.items():
        fall = start_of.get(b + 1, len(blocks))
        got = []
        for succ in (next((x for x in sides if x != fall), None), fall):
            ins = {i for blk in sides.get(succ, ()) for i in range(*blocks[blk])} if succ is not None else set()
            ins |= {i for j in list(ins) if j in cd for i in cd[j]}
            got.append(frozenset(ins))
        region = got[0] | got[1]
        if not region.isdisjoint(shared) and region.isdisjoint(backs):
            out[b] = (got[0], got[1])
    return out


def _back(fn: Function, i: int) -> bool:
    """Whether instruction ``i`` is a branch back to an earlier position (a loop)."""
    ins = fn.instructions[i]
    return ins.base == "bra" and bool(ins.operands) and fn.labels.get(ins.operands[0].strip(), i + 1) <= i


def _sides(fn: Function, blocks: Sequence[tuple[int, int]]) -> dict[int, dict[int, set[int]]]:
    """Conditional branch instruction -> {successor block: the blocks on the way from it to the
    branch's immediate post-dominator}."""
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
    # postdominator sets as bit masks over the blocks and the exit (bit k: block k)
    pdom: list[int] = [(1 << (nb + 1)) - 1] * nb + [1 << exit_node]
    changed = True
    while changed:
        changed = False
        for k in range(nb - 1, -1, -1):
            inter = -1
            for s in succ[k]:
                inter &= pdom[s]
            new = inter | (1 << k)
            if new != pdom[k]:
                pdom[k], changed = new, True
    ipdom: dict[int, int] = {}
    size = [p.bit_count() for p in pdom]
    for k in range(nb):
        strict = pdom[k] & ~(1 << k)
        # strict postdominators form a chain: the immediate one is postdominated by all the others
        ipdom[k] = max(_members(strict), key=size.__getitem__) if strict else exit_node
    out_map: dict[int, dict[int, set[int]]] = {}
    for k, (_s, e) in enumerate(blocks):
        last = fn.instructions[e - 1]
        if last.base != "bra" or not last.pred:
            continue
        sides: dict[int, set[int]] = {}
        for sblk in succ[k]:
            dep = sides.setdefault(sblk, set())
            node = sblk
            seen = 0
            while node != ipdom[k] and node != exit_node and seen <= nb:
                dep.add(node)
                node = ipdom.get(node, exit_node)
                seen += 1
        out_map[last.index] = sides
    return out_map


def _members(bits: int) -> Iterator[int]:
    """The positions of the set bits of ``bits``, lowest first."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


def varying_cut_loop(fn: Function, res: Any) -> bool:
    """Whether a loop cut at the loop cap, in a run that completed (ptx_exec.RunResult), holds a
    shared-memory instruction whose figure differed between its executions (a triangular loop over a
    tile: its first iterations do not stand for it; global loops, mostly grid-stride, are left as
    they are: a second run costs up to ptx_eval.WHOLE_LOOPS_BUDGET times the first)."""
    if not res.complete or not res.truncated:
        return False
    for b in res.truncated:
        ops = fn.instructions[b].operands
        top = fn.labels.get(ops[0].strip()) if ops else None
        if top is not None and any(top <= i <= b and r.space == "shared" and len(set(r.per_call)) > 1
                                   for i, r in res.mem.items()):
            return True
    return False
