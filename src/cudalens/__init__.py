"""cudalens: the CUDA performance guidance, made executable.

Flow: evidence (source, compiled code, hardware, measurements, counters) -> facts -> rules -> findings
-> reports. Each sub-package is one step of that flow; see DESIGN notes in the README.
"""

__version__ = "0.1.0"
