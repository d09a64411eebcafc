"""The import graph reads top to bottom: the `invscale` command (invscale_cli) on the top floor imports the parts
it dispatches to and nothing imports it; the ground floor (invscale: judges, Label Studio, quotas, options)
imports no other part; and no part imports one that imports it back (no arrow runs up). Every import counts,
those inside functions too: an arrow is an arrow whenever it is followed."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARTS = ("invscale_cli", "invscale_demo", "cait_dataset", "launch", "postprocess", "lmms_eval_tasks", "lmms_eval_models",
         "model_configs", "invscale")


def arrows() -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) -> the files (with line) that import it."""
    found: dict[tuple[str, str], list[str]] = {}
    for part in PARTS:
        for path in sorted((REPO / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    target = module.split(".")[0]
                    if target in PARTS and target != part:
                        found.setdefault((part, target), []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_part_is_a_package_the_distribution_ships():
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert all((REPO / part / "__init__.py").is_file() for part in PARTS)
    assert 'invscale = "invscale_cli.main:main"' in pyproject


def test_the_ground_floor_imports_no_other_part():
    assert {pair: files for pair, files in arrows().items() if pair[0] == "invscale"} == {}


def test_nothing_imports_the_front_door():
    assert {pair: files for pair, files in arrows().items() if pair[1] == "invscale_cli"} == {}


def test_no_arrow_runs_back_up():
    graph = arrows()
    sorter = TopologicalSorter({part: {target for (source, target) in graph if source == part} for part in PARTS})
    try:
        sorter.prepare()
    except CycleError as error:
        cycle = error.args[1]
        raise AssertionError("a cycle: " + "; ".join(f"{a} -> {b} ({', '.join(graph[(a, b)][:3])})"
                                                     for a, b in zip(cycle, cycle[1:]))) from None
