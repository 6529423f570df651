"""Is a file C/C++/CUDA at all, and where are its syntax errors (tree-sitter-cuda trees)."""

from __future__ import annotations

from typing import Any

from cudalens.source.expr import node_text as text_of
from cudalens.source.syntax import line_of

# Top-level node types that only C-family sources produce.
_C_DECLS = frozenset({
    "function_definition", "preproc_include", "preproc_def", "preproc_function_def", "template_declaration",
    "namespace_definition", "struct_specifier", "class_specifier", "preproc_ifdef", "preproc_if",
    "linkage_specification", "type_definition", "using_declaration", "alias_declaration",
})


def error_ratio(tree: Any, size: int) -> float:
    """Share of the file's bytes that lie inside ERROR nodes or are missing tokens."""
    if size == 0:
        return 0.0
    covered = 0
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            covered += max(n.end_byte - n.start_byte, 1)
            continue
        if n.has_error:
            stack.extend(n.children)
    return min(covered / size, 1.0)


def looks_like_c(data: bytes, tree: Any) -> tuple[bool, str]:
    """Decide whether ``data`` is C/C++/CUDA source.

    Criterion: no NUL bytes, and either at least one C-only top-level construct (a function
    definition, a ``#`` directive, a template, a struct ...) with less than 50 % of the bytes in
    parse errors (any share when the text holds a CUDA keyword such as ``__global__``), or an
    empty/comment-only file. Bytes that are not UTF-8 are kept as the compiler reads them. Python, JSON,
    Markdown and binary files fail this: they have no C-only construct, or mostly errors.
    """
    if b"\x00" in data[:65536]:
        return False, "binary data (NUL bytes)"
    stripped = data.strip()
    if not stripped:
        return True, ""
    root = tree.root_node
    kinds = {c.type for c in root.named_children}
    if kinds <= {"comment"}:
        return True, ""
    ratio = error_ratio(tree, len(data))
    c_like = bool(kinds & _C_DECLS) or any(
        c.type == "declaration" and not c.has_error and text_of(c).rstrip().endswith(";")
        for c in root.named_children
    )
    if stripped[:1] in (b"{", b"[") and b"__global__" not in data and b"#include" not in data:
        return False, "looks like JSON"
    if not c_like:
        return False, "no C/C++ declaration or directive found"
    if ratio > 0.5 and not any(marker in data for marker in _CUDA_MARKERS):
        return False, f"{ratio:.0%} of it does not parse as C++; first parse error at line {error_lines(root)[0]}"
    return True, ""  # CUDA with syntax errors is modelled where it parses; the errors become problems


#: Text only CUDA sources hold: a file with one of these is modelled however broken its syntax
_CUDA_MARKERS = (b"__global__", b"__device__", b"<<<", b"__shared__", b"__constant__")


def error_lines(root: Any) -> list[int]:
    """Lines of ERROR nodes and missing tokens (anonymous ones too: a missing ``]``), never empty
    for a tree with errors: at worst the line where the first erroneous node starts."""
    lines = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            lines.add(line_of(n))
        elif n.has_error:
            stack.extend(n.children)
    return sorted(lines) or [line_of(root)]
