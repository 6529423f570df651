"""cudalens.labs: the guide's experiments, reproduced on the GPU at hand.

``all_labs()`` lists them in the catalog's order, ``get_lab(name)`` finds one, ``run_lab(lab,
runner, quick)`` measures and judges it (see core.py for the shape of a lab, runner.py for the GPU
access and fake.py for the GPU-less runner used in tests).
"""

from cudalens.labs.registry import all_labs, get_lab, run_lab, write_result

__all__ = ["all_labs", "get_lab", "run_lab", "write_result"]
