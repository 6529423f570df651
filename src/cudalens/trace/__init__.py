"""Application tracing: CUPTI activity records of a whole program (kernels, copies, syncs, NVTX),
assessed into application facts and findings (``cudalens profile -- COMMAND``).

:mod:`.run` traces a command (Python programs in-process through cupti-python, native ones through
an injection library), :mod:`.records` holds the facts, :mod:`.assess` the application findings,
:mod:`.kernels` the per-kernel evidence, :mod:`.app` joins them into the report.
"""
