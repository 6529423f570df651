"""Declarations of a function as the front end reads them: qualifiers, template parameters and
parameters (shared by the file-level parse and the kernel walk)."""

from __future__ import annotations

from typing import Any

from cudalens.source.expr import node_text as text_of
from cudalens.source.model import Param
from cudalens.source.syntax import function_declarator, iter_nodes


def template_params(node: Any) -> tuple[str, ...]:
    plist = node.child_by_field_name("parameters")
    names = []
    if plist is not None:
        for p in plist.named_children:
            ident = [c for c in iter_nodes(p) if c.type in ("type_identifier", "identifier")]
            if ident:
                names.append(text_of(ident[-1]) if p.type != "type_parameter_declaration" else text_of(ident[0]))
    return tuple(names)


def qualifiers(fn: Any) -> frozenset[str]:
    """``__global__``/``__device__``/``__host__`` as written before the function's declarator."""
    decl = fn.child_by_field_name("declarator")
    end = decl.start_byte if decl is not None else fn.end_byte
    prefix = fn.text[: end - fn.start_byte].decode("utf-8", "replace")
    return frozenset(q for q in ("__global__", "__device__", "__host__") if q in prefix)


def _parameters(fn: Any) -> list[Any]:
    fd = function_declarator(fn)
    plist = fd.child_by_field_name("parameters") if fd is not None else None
    return [p for p in (plist.named_children if plist is not None else ())
            if p.type in ("parameter_declaration", "optional_parameter_declaration")]


def declarator_name_node(d: Any, kinds: frozenset[str] = frozenset({"identifier"})) -> Any:
    """The name node (of one of ``kinds``) a declarator declares, through pointer, array, reference and
    init declarators (None for an unnamed parameter); ``scope`` asks for field identifiers too."""
    cur = d
    while cur is not None:
        if cur.type in kinds:
            return cur
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            ids = [c for c in cur.named_children if c.type == "identifier"]
            nxt = ids[0] if ids else None
        cur = nxt
    return None


def param_names(fn: Any) -> tuple[str, ...]:
    """``tuple(p.name for p in params(fn))``, the names alone read."""
    return tuple(text_of(n) if n is not None else "" for n in
                 (declarator_name_node(p.child_by_field_name("declarator")) for p in _parameters(fn)))


def params(fn: Any) -> tuple[Param, ...]:
    out = []
    for p in _parameters(fn):
        d = p.child_by_field_name("declarator")
        name_node = declarator_name_node(d)
        ptext = text_of(p)
        name = text_of(name_node) if name_node is not None else ""
        if name_node is not None:
            a, b = name_node.start_byte - p.start_byte, name_node.end_byte - p.start_byte
            raw = p.text
            type_text = (raw[:a] + raw[b:]).decode("utf-8", "replace")
        else:
            type_text = ptext
        type_text = " ".join(type_text.split()).replace(" *", "*").replace("* ", "*")
        is_pointer = d is not None and any(n.type in ("pointer_declarator", "array_declarator") for n in iter_nodes(d))
        top_quals = [text_of(c) for c in p.children if c.type == "type_qualifier"]
        tnode = p.child_by_field_name("type")
        is_const = "const" in top_quals or (tnode is not None and "const" in text_of(tnode).split())
        is_restrict = "__restrict__" in ptext or " restrict" in ptext
        out.append(Param(name, type_text.strip(), is_pointer, is_restrict, is_const))
    return tuple(out)
