"""G4: Naturally aligned words of 1, 2, 4, 8 or 16 bytes."""

from __future__ import annotations

from typing import Iterator

from cudalens.findings import Finding, Layer
from cudalens.rules._compiled import compiled_kernels, line_or_kernel
from cudalens.rules.context import RuleContext
from cudalens.rules.registry import Confirmation, rule


@rule(
    "G4",
    name="split-narrow-loads",
    layers="S C",
    confirmed_by=Confirmation(("ldg.8", "ldg.16", "stg.8", "stg.16"), "8/16-bit global loads/stores"),
)
def split_narrow_loads(ctx: RuleContext) -> Iterator[Finding]:
    """What it does
    Finds source lines whose global accesses compile to several 8- or 16-bit loads/stores, the
    signature of a struct whose size or alignment is not 1, 2, 4, 8 or 16 bytes.

    Why it matters
    The hardware loads naturally aligned words of 1, 2, 4, 8 or 16 bytes in one instruction. A
    3-byte struct is read member by member: three instructions and three memory requests where
    one would do.

    Example
        struct Rgb { unsigned char r, g, b; };            // 3 bytes -> 3 x LDG.E.U8

    Lines whose source accesses are all of 1- or 2-byte elements (``char``, ``__half``) are not
    reported: their narrow loads are the element's natural width.

    Fix
    Pad and align the type: ``struct __align__(4) Rgba { unsigned char r, g, b, a; };`` (one
    32-bit load), or use the built-in vector types (uchar4, float4).
    """
    for name, k in compiled_kernels(ctx):
        for line, counts in sorted(k.sass_by_line.items()):
            narrow = sum(counts.get(c, 0) for c in ("ldg.8", "ldg.16", "stg.8", "stg.16"))
            if narrow < 2:  # (a finding needs two narrow accesses and no wide one: the rest is read for those)
                continue
            wide = sum(
                v
                for c, v in counts.items()
                if c.startswith(("ldg.", "stg.")) and c.split(".")[1] in ("64", "128", "256")
            )
            if wide:
                continue
            src_kernel = next((sk for sk in ctx.source.kernels if sk.name == name), None)
            sizes = [a.bytes_per_thread for a in getattr(src_kernel, "accesses", ())
                     if a.line == line and a.space == "global"]
            if sizes and all(b is not None and b <= 2 for b in sizes):
                continue  # 8/16-bit elements (char, __half) load at their natural width: nothing is split
            yield ctx.finding(
                line_or_kernel(ctx, name, line),
                f"line {line} of {name} reads or writes global memory in {narrow} separate "
                "8/16-bit accesses (a struct not sized/aligned to a power of two?)",
                "align the element type with __align__(4/8/16) and pad it to that size, or use a "
                "vector type (uchar4, short4, float4)",
                kernel=name,
                layer=Layer.COMPILED,
                facts=(("narrow_global_accesses", narrow), ("line_counts", counts)),
            )
