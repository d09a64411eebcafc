"""The analysis tests never load lmms-eval: .ci/run runs them once, against the newest lmms-eval only (the oldest
supported one's environment differs from it in lmms-eval alone). If one of them comes to load it, this fails, and
.ci/run's second pass must take tests/postprocess again."""

import sys

import pytest


@pytest.fixture(autouse=True, scope="session")
def _lmms_eval_is_never_loaded():
    yield
    loaded = sorted(name for name in sys.modules if name == "lmms_eval" or name.startswith("lmms_eval."))
    assert not loaded, f"an analysis test loaded lmms-eval ({', '.join(loaded[:3])}): see tests/postprocess/conftest.py"
