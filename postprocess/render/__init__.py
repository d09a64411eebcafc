"""Presentation: display labels (labels.py), table rendering (tables.py), the paper's tables
(paper_tables.py, cait_tables.py), figures (figures.py), the report (report.py) and the output files
(outputs.py)."""
