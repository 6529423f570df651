"""Per-kernel facts, and no findings: what the rules read, computed before anything is judged.

- :mod:`~cudalens.evidence.join`: source × compiled facts as one :class:`KernelRecord` per kernel;
- :mod:`~cudalens.evidence.compiled_access`: the warp access model on the compiled PTX (kept from
  the one compile), each kernel under the launch the launch layer gives it;
- :mod:`~cudalens.evidence.model_workers`: the second process that evaluates part of the kernels;
- :mod:`~cudalens.evidence.compiled_figures`: the compiled model's figures where the source model
  has none, written into the records' kernels so the rules read them.

Below: ``source``, ``access``, ``compiled``, ``project`` (the launch layer). Above: ``rules`` read
these facts; ``pipeline`` schedules them.
"""
