"""cudalens's Python API: what the commands do, as functions returning typed, frozen results.

- :func:`analyze`, :func:`check` and :func:`profile` -> :class:`Report` (findings, records,
  ``to_dict()``, HTML; the one report every output format is emitted from; ``Profile`` is the
  same class, under its earlier name);
- :func:`occupancy` -> :class:`Occupancy`; :func:`bench` -> :class:`Bench`; :func:`tune` -> :class:`Tune`.

Every result has ``to_dict()`` (the command's JSON) and ``_repr_html_()`` (shown by notebooks).
Errors are :class:`cudalens.errors.CudalensError` with one line a user can act on. The command
line (``cudalens ...``) is a layer over these functions. Heavy modules load on first call.
"""

from cudalens.api.analysis import Report, analyze, check
from cudalens.api.results import Bench, Occupancy, Tune
from cudalens.api.run import bench, occupancy, profile, tune

#: the report of :func:`profile` (its earlier name)
Profile = Report

__all__ = ["Bench", "Occupancy", "Profile", "Report", "Tune", "analyze", "bench", "check", "occupancy", "profile",
           "tune"]
