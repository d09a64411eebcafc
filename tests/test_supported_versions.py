"""What pyproject.toml promises: Python >= 3.10 and lmms-eval 0.7.x, the range CI tests at both ends."""

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ["invscale", "invscale_cli", "lmms_eval_tasks", "postprocess", "model_configs", "launch", "lmms_eval_models", "invscale_demo", "perf",
            "tests"]
VERMIN = "import sys; from vermin import main; sys.exit(main())"  # vermin has no `python -m vermin`


def test_the_code_needs_no_python_newer_than_3_10():
    """vermin reads the syntax and the standard-library names each file uses (typing.Self, tomllib,
    ExceptionGroup, ... are 3.11); .ci/run also compiles the code with a real 3.10 where one is installed."""
    result = subprocess.run([sys.executable, "-c", VERMIN, "--target=3.10-", "--violations", "--no-tips",
                             "--eval-annotations", *PACKAGES], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_3_11_datetime_utc():
    """datetime.UTC (3.11) is a name vermin does not know; timezone.utc is the same object."""
    offenders = []
    for path in (p for package in PACKAGES for p in (REPO / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.module == "datetime" and any(a.name == "UTC" for a in node.names)
                    or isinstance(node, ast.Attribute) and node.attr == "UTC"
                    and isinstance(node.value, ast.Name) and node.value.id == "datetime"):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_pyproject_states_the_range_and_the_installed_lmms_eval_is_in_it():
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r'^requires-python = ">=3.10"', pyproject, re.MULTILINE)
    requirement = re.search(r'^    "lmms-eval([^"]+)",', pyproject, re.MULTILINE)
    assert requirement and SpecifierSet(requirement.group(1)) == SpecifierSet(">=0.7,<0.8,!=0.7.1,!=0.7.2")
    assert Version(importlib.metadata.version("lmms-eval")) in SpecifierSet(requirement.group(1))


def test_the_patch_releases_whose_wheels_lack_task_files_are_excluded():
    """0.7.1 and 0.7.2's wheels lack the `_default_template_yaml` files their task YAMLs include: every run fails
    while lmms-eval indexes its tasks. The requirement leaves them out; 0.7 and 0.7.3 are in it (CI tests both)."""
    from packaging.requirements import Requirement

    pyproject = (REPO / "pyproject.toml").read_text()
    lmms_eval = next(Requirement(line.strip().strip('",')) for line in pyproject.splitlines()
                     if line.strip().startswith('"lmms-eval'))
    assert [version for version in ("0.7", "0.7.1", "0.7.2", "0.7.3") if version in lmms_eval.specifier] == ["0.7", "0.7.3"]


def test_torch_is_bounded_to_the_release_setup_installs_and_ci_tests():
    """docs/installing.md: torch is bounded, not tested at its newest; the bound holds setup.sh's pin."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    dependencies = [Requirement(line.strip().strip('",')) for line in (REPO / "pyproject.toml").read_text().splitlines()
                    if line.strip().startswith(('"torch>=', '"torchvision>='))]
    pins = dict(re.findall(r"\b(torch|torchvision)==([\d.]+)", (REPO / "scripts" / "setup.sh").read_text()))
    assert {r.name for r in dependencies} == {"torch", "torchvision"} == set(pins)
    for requirement in dependencies:
        assert requirement.specifier.contains(pins[requirement.name])
        assert requirement.specifier.contains(Version(importlib.metadata.version(requirement.name)).base_version)
