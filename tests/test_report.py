"""Output files, report and command line on the constructed data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis_factory import EXPECTED_CASES, EXPECTED_ELIGIBLE, constructed_table, models_frame
from logfactory import make_record, write_run
from postprocess.cli import main
from postprocess.inverse_scaling.analysis import CASE_COLUMNS
from postprocess.inverse_scaling.analysis import run_analysis as run_analysis_with
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.figures import figure_subtasks
from postprocess.render.outputs import write_outputs

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SUMMARY_INTS = [
    "eligible_comparisons", "cases", "significant_uncorrected", "significant_bh_cases", "significant_bh_all",
    "dense_only_cases", "twofold_total_cases", "twofold_active_cases", "adjacent_cases", "same_encoder_tier_cases",
]  # fmt: skip


def run_analysis(table: pd.DataFrame, models: pd.DataFrame, **overrides):
    """The analysis at the paper's parameters unless overridden."""
    return run_analysis_with(table, models, Parameters(**overrides))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    out = tmp_path_factory.mktemp("out")
    analysis = run_analysis(constructed_table(with_controls=True), models_frame())
    quality = {
        "Runs found": pd.DataFrame({"model": ["A-1B"], "runs": [3]}),
        "Unparsed answers per model x benchmark": pd.DataFrame(columns=["model", "benchmark", "unparsed"]),
    }
    return out, write_outputs(analysis, out, quality=quality)


def test_data_files(outputs):
    out, paths = outputs
    cases = pd.read_csv(paths["cases"])
    assert list(cases.columns) == CASE_COLUMNS
    assert len(cases) == EXPECTED_CASES
    comparisons = pd.read_parquet(paths["comparisons"])
    assert list(comparisons.columns) == CASE_COLUMNS and len(comparisons) == EXPECTED_ELIGIBLE
    summary = json.loads(paths["summary"].read_text())
    assert all(isinstance(summary[key], int) for key in SUMMARY_INTS)
    assert [r["subtask"] for r in summary["replicated_subtasks"]] == ["Jigsaw"]


def test_tables_in_three_formats(outputs):
    out, _ = outputs
    stems = {p.stem for p in (out / "tables").iterdir()}
    assert {
        "table02_cases_by_family",
        "table35_significance_by_net",
        "table45_cot_by_family",
        "quality_runs_found",
    } <= stems
    for stem in stems:
        for suffix in ("csv", "md", "tex"):
            assert (out / "tables" / f"{stem}.{suffix}").stat().st_size > 0, f"{stem}.{suffix}"


def test_figures_are_png(outputs):
    _, paths = outputs
    for name in ("figure1", "figure2"):
        assert paths[name].read_bytes()[:8] == PNG_MAGIC


def test_reports(outputs):
    out, paths = outputs
    markdown = paths["report_md"].read_text()
    assert "## Headline numbers" in markdown and "**20** pairwise inverse-scaling cases" in markdown
    assert "](figures/figure1_scaling_curves.png)" in markdown
    assert "Unparsed answers per model x benchmark: none." in markdown
    html = paths["report_html"].read_text()
    assert html.count('src="data:image/png;base64,') == 2
    assert "http://" not in html and "https://" not in html  # self-contained
    assert "Runs found" in html and "Table 2" in html and "Data quality" in html
    assert html.index("Headline numbers") < html.index("Table 2") < html.index("Figures") < html.index("Data quality")


def write_constructed_logs(root: Path) -> Path:
    """The constructed table as lmms-eval runs (one run per model) plus a registry YAML for its models."""
    table = constructed_table(with_controls=True)
    for (model, benchmark, split, variant), rows in table.groupby(["model", "benchmark", "split", "variant"]):
        records = [
            make_record(
                benchmark=benchmark,
                split=split,
                subtask=r.subtask,
                question_id=r.question_id,
                variant=variant,
                gold=None if pd.isna(r.gold) else r.gold,
                response=r.response,
                prediction=None if pd.isna(r.correct) else r.prediction,
                correct=None if pd.isna(r.correct) else bool(r.correct),
                match="none" if pd.isna(r.correct) else "letter",
            )  # fmt: skip
            for r in rows.itertuples()
        ]
        write_run(root / "logs", model, f"{benchmark.lower()}_{split}_{variant}", records)
    models = models_frame()
    registry = {
        "families": list(dict.fromkeys(models["family"])),
        "models": [
            {
                "key": m.model,
                "hf_id": f"test/{m.model.lower()}",
                "family": m.family,
                "size": m.size,
                "total_params": int(m.total_params),
                "active_params": int(m.active_params),
                "moe": bool(m.moe),
                "encoder_tier": m.encoder_tier,
            }  # fmt: skip
            for m in models.itertuples()
        ],
    }
    path = root / "models.yaml"
    path.write_text(yaml.safe_dump(registry))
    return path


def test_cli_end_to_end(tmp_path, capsys):
    registry = write_constructed_logs(tmp_path)
    arguments = ["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"),
                 "--extra-models", str(registry), "--cache-dir", str(tmp_path / "cache"),
                 "--figure-subtask", "BLINK/val/Jigsaw", "MMMU/test/Art"]  # fmt: skip
    assert main(arguments) == 0
    assert f"{EXPECTED_CASES} cases over {EXPECTED_ELIGIBLE} eligible comparisons" in capsys.readouterr().out
    table = constructed_table(with_controls=True)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["rows"] == len(table)  # nothing skipped
    from_logs = pd.read_csv(tmp_path / "out" / "cases.csv")
    expected = run_analysis(table, models_frame()).cases[CASE_COLUMNS]
    pd.testing.assert_frame_equal(from_logs, expected.reset_index(drop=True), check_dtype=False)
    assert main([*arguments, "--min-net", "8"]) == 0  # second run reads the cache
    assert len(pd.read_csv(tmp_path / "out" / "cases.csv")) == 9


@pytest.mark.parametrize("thresholds", [{"min_net": 1000}, {"min_n": 1000}])
def test_outputs_without_cases(tmp_path, thresholds):
    analysis = run_analysis(constructed_table(with_controls=True), models_frame(), **thresholds)
    paths = write_outputs(analysis, tmp_path, quality=None)
    assert analysis.summary["cases"] == 0 and not analysis.controls
    assert len(pd.read_csv(paths["cases"])) == 0
    assert paths["report_html"].read_text().count("data:image/png;base64,") == 2


def test_chosen_figure_subtasks(tmp_path):
    chosen = [("MME", "test", "Scene"), ("MMMU", "dev_val", "Art")]
    analysis = run_analysis(constructed_table(), models_frame())
    figure1, _ = figure_subtasks(analysis.replication, analysis.subtask_accuracy, chosen)
    assert list(figure1.itertuples(index=False, name=None)) == chosen
    with pytest.raises(ValueError, match="not in the table"):
        figure_subtasks(analysis.replication, analysis.subtask_accuracy, [("MME", "test", "Nope")])


def test_cli_rejects_unusable_input(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "out")]) == 2
    assert "no per-question rows" in capsys.readouterr().err
    assert main(["report", "--logs", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_module_entry_point(tmp_path):
    (tmp_path / "empty").mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "postprocess", "report", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and result.stderr.startswith("error: ")
