"""Why the larger model fails: the error taxonomy of the inverse-scaling paper (Section 5.6, Appendix G.1).

  sample.py     the flip questions of the cases and the seeded sample (per-case cap, dataset quotas,
                per-family cap, degenerate responses left out), with the numbers drawn per stratum;
                each sampled question and its images are reloaded from the task's data by question_id
                (postprocess/logs/questions.py, shared with answer adjudication)
  prompt.py     the Appendix G.1 judge prompt verbatim, the A/B sides, the strict JSON verdict
  judging.py    two judges through the shared judge client (invscale.judges), the verdicts and the
                files the human check (postprocess.human) reads
  numbers.py    each judge's labels by family and by dataset, judge agreement and Cohen's kappa

Command: `python -m postprocess taxonomy` (postprocess/cli/taxonomy.py); tables:
postprocess/render/taxonomy_tables.py.
"""
