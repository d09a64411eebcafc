"""The inverse-scaling analysis as numbers: outcomes and pairwise flips (compare.py), Benjamini-Hochberg
(stats.py), case-level numbers (cases.py), CoT and option-order controls (controls.py), accuracy
(accuracy.py), the paper's thresholds (parameters.py) and the entry point (analysis.py)."""
