"""Which ``--define NAME=VALUE`` values a compiler may be given as ``-DNAME=VALUE``.

``--define NAME=VALUE`` serves two readers. The access model takes it as the value of a kernel
parameter, template parameter or macro; the compilers (nvcc here, NVRTC for a measured launch)
take it as ``-DNAME=VALUE``. A parameter name made into a macro rewrites every use of that word,
in CUDA's own headers too (``-Dn=64`` breaks the math headers), so :func:`compiler_defines`
passes a name to the compiler only when the file uses it as a macro (``#define``, ``#undef``,
``#ifdef``, ``#ifndef``, ``#if``/``#elif``) or when it is not the name of a kernel parameter or
template parameter of that file.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from cudalens.source.model import SourceModel

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(define|undef|ifdef|ifndef|if|elif)\b(.*)$", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")


def macro_names(text: str) -> set[str]:
    """Names the file uses as preprocessor macros: #define'd, #undef'd, or tested by #if/#ifdef/..."""
    names: set[str] = set()
    for m in _DIRECTIVE.finditer(text):
        kind, rest = m.group(1), m.group(2).split("//", 1)[0].split("/*", 1)[0]
        idents = _IDENT.findall(rest)
        if kind in ("define", "undef", "ifdef", "ifndef"):
            names.update(idents[:1])
        else:
            names.update(i for i in idents if i != "defined")
    return names


def compiler_defines(model: SourceModel, defines: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``defines`` that may be handed to a compiler as ``-DNAME=VALUE``.

    Kept: names the file uses as macros (:func:`macro_names`, plus the front end's own list), and
    names that are neither a kernel parameter nor a template parameter of a kernel in the file.
    Dropped: parameter names that are not macros; for those the value is a hint for the access
    model only (``-Dn=64`` would rewrite every ``n`` of CUDA's headers).
    """
    macros = macro_names(model.text) | set(model.defines)
    params = {p.name for k in model.kernels for p in k.params}
    params |= {t for k in model.kernels for t in k.template_params}
    return {k: v for k, v in defines.items() if ":" not in k and (k in macros or k not in params)}
