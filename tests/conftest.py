"""Session fixtures shared by the tests that run the real lmms-eval CLI: fixture data and tiny models."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

from invscale_demo.fixtures import write_fixtures
from invscale_demo.tiny_models import ensure_model
from lmms_eval_tasks.install import export_tasks

# Property tests draw the same examples every run and keep no example database: a failure is reproducible
# from the code alone, and a draw found once cannot keep failing later runs of unchanged code.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")

os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


@pytest.fixture(scope="session")
def fixture_data(tmp_path_factory) -> dict[str, str]:
    return write_fixtures(tmp_path_factory.mktemp("fixture_data"))


@pytest.fixture(scope="session")
def fixture_tasks(tmp_path_factory, fixture_data) -> Path:
    """The task folder with every base task pointed at the local fixtures."""
    return export_tasks(tmp_path_factory.mktemp("fixture_tasks") / "tasks", fixture_data)


@pytest.fixture(scope="session")
def tiny_qwen3_vl(tmp_path_factory) -> Path:
    return ensure_model(tmp_path_factory.mktemp("models") / "tiny-qwen3-vl", "qwen3_vl")


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory) -> Path:
    return ensure_model(tmp_path_factory.mktemp("models") / "tiny-llava", "llava_hf")
