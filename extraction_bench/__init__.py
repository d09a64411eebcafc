"""Measuring answer extraction against labelled text: the synthetic corpus (tests/lmms_eval_tasks/extraction_corpus)
and the labelled real responses (tests/lmms_eval_tasks/extraction_real, text read from ../shared/data/m3cot). Not
part of the installed package: it reads the repository's tests/ folder."""
