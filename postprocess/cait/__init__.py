"""CAIT ("Seeing vs. Believing"): metrics from the per-question table (metrics.py) and the LLM
re-evaluation from the models' descriptions (reeval.py)."""
