"""cudalens.assess: before porting anything, is it worth it? (catalog A1-A4, BPG 2.2 and 3.1)

* :mod:`~cudalens.assess.scaling`: Amdahl (strong) and Gustafson (weak) speedup bounds;
* :mod:`~cudalens.assess.hotspots`: host profiles (cProfile run in a subprocess, saved pstats,
  gprof flat profiles) ranked by self time, with the Amdahl bound of each hotspot;
* :mod:`~cudalens.assess.offload`: host time vs device time plus transfers, and the problem size
  above which the GPU wins; formulas in n are parsed safely by :data:`~cudalens.assess.offload.FORMULA`;
* :mod:`~cudalens.assess.plots`: matplotlib figures for the two models.
"""
