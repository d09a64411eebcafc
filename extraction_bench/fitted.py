"""The labelled samples the extraction rules are fitted to, read together: the evidence the admission bar reads
(lmms_eval_tasks.extraction.admission.RULES: how many letters each rule finds there, how many are right, and so
whether it commits).

  M3CoT        every sample (extraction_bench.real.FITTED: dev and the held-out rounds 1-12, each scored once and
               looked at since), 17,208 items
  long prose   long_dev, long_heldout to long_heldout6 and vlmevalkit_dev (extraction_bench.long_prose.FITTED), 3,777
               items
  MathVista    the multiple-choice samples mc_dev_1, mc_heldout_1 and mc_heldout2 to 8 (extraction_bench.mathvista.FITTED),
               1,891 items; its free-form samples are read by the number rules, which the table does not admit

The held-out samples of the current rules (long_prose.HELD_OUT, mathvista.HELD_OUT) are never part of it."""

from __future__ import annotations

import pandas as pd

from . import long_prose, mathvista, real


def read_fitted() -> pd.DataFrame:
    """One row per labelled item of the fitted samples (real.read_sample's columns, and `sample`)."""
    frames = [real.read_sample(real.load_sample(name)).assign(sample=name) for name in real.FITTED]
    frames += [long_prose.read_sample(long_prose.load_sample(name)).assign(sample=name) for name in long_prose.FITTED]
    frames += [mathvista.read_sample(mathvista.load_sample(name), mathvista.MULTIPLE_CHOICE).assign(sample=name)
               for name in mathvista.FITTED if mathvista.sample_kind(name) == mathvista.MULTIPLE_CHOICE]
    return pd.concat(frames, ignore_index=True)
