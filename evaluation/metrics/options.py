"""The options of the metrics that a declaration names, apart from the metrics themselves: reading a
declaration (the metric records, the output kinds) needs their choices and defaults, not the modules that
compute with them (``volumes``, ``hit_radius``, ``detection_maps``, and the lesion matching and boxes those
import), which a run imports only where it scores what they score.
"""

# volumes (``volumes``: its sources there)
UNITS = {"ml": 1000.0, "mm3": 1.0}
VOLUME_UNITS = (*UNITS, "voxels")
PRECISIONS = ("float64", "nifti", "nifti-float32")

# LUNA16's hit radius and CPM (``hit_radius``: its sources there)
CPM_FP_RATES = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_DIAMETER = 10.0  # mm: the script's diameter of a finding of unknown (negative) size
READINGS = ("nearest", "interpolate")
DISTANCES = ("strict", "inclusive")

# PI-CAI's detection maps (``detection_maps``: its sources there)
MIN_OVERLAP = 0.1
OVERLAPS = ("iou", "dsc")
CASE_SCORES = ("max", "bayesian")
LESION_COUNTS = ("reference", "candidates")
DYNAMIC = ("dynamic", "dynamic-v2", "dynamic-fast")
