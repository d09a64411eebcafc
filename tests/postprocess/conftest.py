"""The analysis tests never load lmms-eval: .ci/run runs them once, against the newest lmms-eval only (the oldest
supported one's environment differs from it in lmms-eval alone). During each of them lmms-eval cannot be imported
(even where another test of the same worker loaded it before), so a test that comes to need it fails here, saying
that .ci/run's second pass must take tests/postprocess again."""

import importlib.abc
import sys

import pytest


class _NoLmmsEval(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "lmms_eval" or name.startswith("lmms_eval."):
            raise ImportError(f"an analysis test imports {name}: .ci/run's second pass (lmms-eval 0.7) leaves "
                              "tests/postprocess out on the ground that none does (tests/postprocess/conftest.py)")
        return None


@pytest.fixture(autouse=True)
def _lmms_eval_is_not_importable():
    loaded = {name: sys.modules.pop(name) for name in list(sys.modules)
              if name == "lmms_eval" or name.startswith("lmms_eval.")}
    finder = _NoLmmsEval()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        sys.modules.update(loaded)
