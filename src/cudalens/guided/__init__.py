"""Guided analysis: static findings checked against counters, re-ranked by measurement.

- :mod:`.crosscheck`: predictions vs Nsight Compute counters, disagreements as V1 findings;
- :mod:`.rank`: re-ranking by measured impact and the first steps to take;
- :mod:`.speed_of_light`: achieved bandwidth and FLOP/s against the ceilings, the roofline point;
- :mod:`.merge`: all of it, from the pipeline's kernel records and findings: the keys the guided report adds.
"""

from cudalens.guided.crosscheck import CrossCheck, cross_check, disagreement_findings
from cudalens.guided.inputs import Measurement, device_ceilings, measurement_from_bench
from cudalens.guided.merge import guide_counters, merge_guided
from cudalens.guided.rank import KernelLoad, first_steps, kernel_loads, rank_findings
from cudalens.guided.speed_of_light import SpeedOfLight, speed_of_light

__all__ = [
    "CrossCheck", "KernelLoad", "Measurement", "SpeedOfLight", "cross_check", "device_ceilings",
    "disagreement_findings", "first_steps", "guide_counters", "kernel_loads", "measurement_from_bench",
    "merge_guided", "rank_findings", "speed_of_light",
]
