"""Output files, report and command line on the constructed data."""

from __future__ import annotations

import json
import subprocess
from html import escape as escape_html
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis_factory import (EXPECTED_CASES, EXPECTED_ELIGIBLE, constructed_table, models_frame,
                              write_constructed_logs)
from postprocess.cli import main
from postprocess.inverse_scaling.trend import CASE_TREND_COLUMNS
from postprocess.inverse_scaling.credibility import CREDIBILITY_COLUMNS
from postprocess.inverse_scaling.analysis import CASE_COLUMNS
from postprocess.inverse_scaling.analysis import run_analysis as run_analysis_with
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.figures import figure_subtasks
from postprocess.render.outputs import write_outputs

REPO = Path(__file__).resolve().parents[2]
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
    # the case, then its credibility verdict, then its place against the family-wide trend
    assert list(cases.columns) == [*CASE_COLUMNS, *CREDIBILITY_COLUMNS, *CASE_TREND_COLUMNS]
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
    assert "## Terms used" in markdown
    assert "](figures/figure1_scaling_curves.png)" in markdown
    assert "Unparsed answers per model x benchmark: none." in markdown
    html = paths["report_html"].read_text()
    assert html.count('src="data:image/png;base64,') == 3  # Figures 1 and 2, and the family-wide trend's
    assert "](figures/figure_trend.png)" in markdown and "## Family-wide trend in size (ours)" in markdown
    assert "http://" not in html and "https://" not in html  # self-contained
    assert "Runs found" in html and "Table 2" in html and "Data quality" in html
    assert html.index("Headline numbers") < html.index("Table 2") < html.index("Figures") < html.index("Data quality")


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
    expected = run_analysis(table, models_frame()).cases
    pd.testing.assert_frame_equal(from_logs[CASE_COLUMNS], expected[CASE_COLUMNS].reset_index(drop=True),
                                  check_dtype=False)
    assert list(from_logs["verdict"]) == list(expected["verdict"])
    tiers = pd.read_csv(tmp_path / "out" / "tables" / "quality_answers_per_extraction_tier_model_x_benchmark.csv")
    assert tiers["n_rows"].sum() == len(table)  # these records predate the tier: their predictions' tier is unknown
    assert tiers["unknown_tier"].sum() == table["correct"].notna().sum() and tiers["strict"].sum() == 0
    assert main([*arguments, "--min-net", "8"]) == 0  # second run reads the cache
    assert len(pd.read_csv(tmp_path / "out" / "cases.csv")) == 9


def test_a_single_model_gets_its_accuracy_and_a_plain_nothing_to_compare(tmp_path, capsys):
    registry = write_constructed_logs(tmp_path)
    out = tmp_path / "out"
    assert main(["report", "--logs", str(tmp_path / "logs" / "A-4B"), "--out", str(out),
                 "--extra-models", str(registry)]) == 0
    assert "1 model and no two of one family to compare" in capsys.readouterr().out
    markdown = (out / "report.md").read_text()
    assert "Nothing to compare pairwise" in markdown and "(Alpha: A-4B)" in markdown
    assert "Headline numbers" not in markdown and "Table 2" not in markdown and "![" not in markdown
    assert "Overall accuracy (%) (Appendix B) for Alpha" in markdown and "Subtask accuracy (%) for Alpha" in markdown
    assert {p.stem for p in (out / "tables").glob("*.csv")} == {
        "appendixB_accuracy_alpha", "appendixB_subtask_accuracy_alpha", "quality_ingestion_overview",
        "quality_runs_found", "quality_problems_by_kind_rows_skipped_kept_or_reported",
        "quality_unparsed_answers_per_model_x_benchmark", "quality_answers_per_extraction_tier_model_x_benchmark",
        "quality_unsettled_answers_per_model_x_benchmark_letter_withheld_no_judge_verdict",
        "quality_missing_model_x_split_runs",
        "quality_partial_runs", "quality_runs_and_samples_files_not_read",
        "quality_duplicate_runs_runs_of_one_model_holding_the_same_questions",
        "quality_generation_settings_that_differ_within_compared_pairs_smaller_vs_larger_model"}
    assert not (out / "figures").exists() or not any((out / "figures").iterdir())
    assert pd.read_csv(out / "cases.csv").empty
    assert json.loads((out / "summary.json").read_text())["models"] == 1


def test_headline_sentences_each_state_one_number_at_one_threshold(outputs):
    _, paths = outputs
    markdown = paths["report_md"].read_text()
    headline = markdown.split("## Headline numbers")[1].split("## ")[0]
    assert "**20** pairwise inverse-scaling cases: eligible comparisons (n ≥ 20) in which the smaller model wins by " \
           "Net ≥ 5; that is 40.0% of 50 eligible comparisons." in headline
    # Table 42's row and the headline agree (one definition of smallest vs. largest)
    assert "- Smallest vs. largest model of a family of three or more: 6 cases in 10 eligible comparisons." in headline
    assert "The larger model is ahead (Net < 0) in" in headline and "The larger model is ahead by Net ≤ −5 in" in headline
    assert " 1 cases" not in markdown and " 1 subtasks" not in markdown
    for term in ("FlipInv", "FlipNorm", "Net", "Eligible", "Case", "BH", "Replicated"):
        assert f"- **{term}**: " in markdown.split("## Terms used")[1].split("## ")[0]


def test_runs_table_shows_relative_files_and_task_counts(tmp_path):
    registry = write_constructed_logs(tmp_path)
    out = tmp_path / "out"
    assert main(["report", "--logs", str(tmp_path / "logs"), "--out", str(out), "--extra-models", str(registry)]) == 0
    runs = pd.read_csv(out / "tables" / "quality_runs_found.csv")
    assert "model_path" not in runs.columns and runs["n_tasks"].min() >= 1
    assert not any(str(f).startswith("/") for f in runs["results_file"])
    assert max(len(line) for line in (out / "report.md").read_text().splitlines() if "Runs found" in line) < 200


@pytest.mark.parametrize("thresholds", [{"min_net": 1000}, {"min_n": 1000}])
def test_outputs_without_cases(tmp_path, thresholds):
    analysis = run_analysis(constructed_table(with_controls=True), models_frame(), **thresholds)
    paths = write_outputs(analysis, tmp_path, quality=None)
    assert analysis.summary["cases"] == 0 and not analysis.controls
    assert len(pd.read_csv(paths["cases"])) == 0
    # Figures 1 and 2, and the trend's wherever a family x subtask was tested (the cases do not matter)
    assert paths["report_html"].read_text().count("data:image/png;base64,") == 2 + (not analysis.trends.empty)


def test_chosen_figure_subtasks(tmp_path):
    chosen = [("MME", "test", "Scene"), ("MMMU", "dev_val", "Art")]
    analysis = run_analysis(constructed_table(), models_frame())
    figure1, _ = figure_subtasks(analysis.replication, analysis.subtask_accuracy, chosen)
    assert list(figure1.itertuples(index=False, name=None)) == chosen
    with pytest.raises(ValueError, match="MME/test/Nope: not a subtask of MME test; its subtasks: Scene$"):
        figure_subtasks(analysis.replication, analysis.subtask_accuracy, [("MME", "test", "Nope")])
    with pytest.raises(ValueError, match=r"BLINK/val/Jigsw: .*\(did you mean BLINK/val/Jigsaw\?\); its subtasks: "
                                         "Counting, Jigsaw, Tiny"):
        figure_subtasks(analysis.replication, analysis.subtask_accuracy, [("BLINK", "val", "Jigsw")])
    with pytest.raises(ValueError, match="no benchmark split MMB/dev in the logs; they hold: BLINK/val, MME/test"):
        figure_subtasks(analysis.replication, analysis.subtask_accuracy, [("MMB", "dev", "X")])


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


@pytest.mark.parametrize("text, markdown", [
    ("a|b", r"a\|b"), ("line 1\nline 2\r\nline 3", "line 1<br>line 2<br>line 3"),
    ("<script>alert(1)</script>", r"\<script>alert(1)\</script>"), ("`x`", r"\`x\`"), ("*x* **y**", r"\*x\* \*\*y\*\*"),
    ("[link](http://x)", r"\[link\](http://x)"), ("~~gone~~", r"\~\~gone\~\~"), ("a &amp; b & c", r"a \&amp; b & c"),
    ("dev_val models__tiny", "dev_val models__tiny"), ("_x_ __y__", r"\_x\_ \_\_y\_\_"), ("p<0.05, n>3", "p<0.05, n>3"),
    ("back\\slash", r"back\\slash"),
])
def test_markdown_escape_shows_text_literally_on_one_line(text, markdown):
    from postprocess.render.report import _inline_markdown
    from postprocess.render.tables import markdown_escape

    assert markdown_escape(text) == markdown
    html = _inline_markdown(markdown)  # the report's HTML of the same Markdown: the text itself, escaped
    assert html == escape_html(text).replace("\r\n", "<br>").replace("\n", "<br>")


def test_progress_bars_follow_the_terminal_unless_asked(monkeypatch):
    from postprocess.cli import build_parser
    from postprocess.cli.logs import show_progress

    arguments = ["report", "--logs", "runs", "--out", "out"]
    for is_terminal in (True, False):
        monkeypatch.setattr(sys.stderr, "isatty", lambda: is_terminal)
        assert show_progress(build_parser().parse_args(arguments)) is is_terminal
        assert show_progress(build_parser().parse_args([*arguments, "--no-progress"])) is False
        assert show_progress(build_parser().parse_args([*arguments, "--progress"])) is True


def test_figures_are_drawn_again_only_when_what_they_show_changes(tmp_path, monkeypatch):
    from postprocess.render import figures, trend_tables

    analysis = run_analysis(constructed_table(with_controls=True), models_frame())
    cache = tmp_path / "figure_cache"
    first = write_outputs(analysis, tmp_path / "first", quality=None, figure_cache=cache)
    assert len(list(cache.iterdir())) == 3  # Figures 1 and 2, and the family-wide trend's

    def no_drawing(*args, **kwargs):
        raise AssertionError("drew a figure the cache holds")

    monkeypatch.setattr(figures, "_draw_scaling_curves", no_drawing)
    monkeypatch.setattr(figures, "_draw_cross_family_bars", no_drawing)
    monkeypatch.setattr(trend_tables, "_draw", no_drawing)
    again = write_outputs(analysis, tmp_path / "again", quality=None, figure_cache=cache)
    for name in ("figure1", "figure2", "figure_trend"):
        assert again[name].read_bytes() == first[name].read_bytes()
    stricter = run_analysis(constructed_table(with_controls=True), models_frame(), min_net=8)  # other cases
    with pytest.raises(AssertionError, match="drew a figure"):
        write_outputs(stricter, tmp_path / "stricter", quality=None, figure_cache=cache)


def _files_of(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and path.name != ".report_files.json"}


@pytest.mark.parametrize("explorer", ["cases", "none"])
def test_a_rerun_with_nothing_changed_reuses_the_outputs_and_says_the_same(tmp_path, capsys, monkeypatch, explorer):
    from postprocess.inverse_scaling import analysis as analysis_module

    registry = write_constructed_logs(tmp_path)
    arguments = ["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--extra-models",
                 str(registry), "--cache-dir", str(tmp_path / "cache"), "--explorer", explorer]
    assert main(arguments) == 0
    said, first = capsys.readouterr(), _files_of(tmp_path / "out")
    assert len(list((tmp_path / "cache").glob("report-*"))) == 1

    def no_analysis(*args, **kwargs):
        raise AssertionError("computed the analysis again")

    monkeypatch.setattr(analysis_module, "run_analysis", no_analysis)
    assert main(arguments) == 0
    assert capsys.readouterr() == said
    assert _files_of(tmp_path / "out") == first  # the explorer's pages written again, the same
    with pytest.raises(AssertionError, match="computed the analysis again"):  # another parameter: another key
        main([*arguments, "--min-net", "8"])


def test_an_entry_whose_files_changed_is_not_reused(tmp_path, capsys):
    registry = write_constructed_logs(tmp_path)
    arguments = ["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--extra-models",
                 str(registry), "--cache-dir", str(tmp_path / "cache"), "--explorer", "none"]
    assert main(arguments) == 0
    first = _files_of(tmp_path / "out")
    # the entry's files are hard links of the outputs: a file edited in the output folder edits the entry's too
    with open(tmp_path / "out" / "cases.csv", "a", encoding="utf-8") as handle:
        handle.write("edited\n")
    assert main(arguments) == 0
    assert _files_of(tmp_path / "out") == first  # computed again, not copied from the edited entry
    entry = next((tmp_path / "cache").glob("report-*"))
    (entry / "files" / "summary.json").unlink()
    assert main(arguments) == 0
    assert _files_of(tmp_path / "out") == first


def test_a_changed_log_or_adjudication_is_a_new_key(tmp_path):
    from postprocess.logs.adjudications import ADJUDICATIONS_MARKER
    from postprocess.render import reuse

    registry = write_constructed_logs(tmp_path)
    arguments = ["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--extra-models",
                 str(registry), "--cache-dir", str(tmp_path / "cache"), "--explorer", "none"]
    assert main(arguments) == 0
    samples = sorted((tmp_path / "logs").rglob("*_samples_*.jsonl"))[0]
    lines = samples.read_text(encoding="utf-8").splitlines()
    samples.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # one answer fewer
    assert main(arguments) == 0
    assert len(list((tmp_path / "cache").glob("report-*"))) == 2
    adjudications = samples.with_name(samples.name.replace("_samples_", ADJUDICATIONS_MARKER))
    key = reuse.report_key(argparse_namespace(arguments), "table", [adjudications])
    adjudications.write_text("{}\n", encoding="utf-8")
    assert reuse.report_key(argparse_namespace(arguments), "table", [adjudications]) != key


def argparse_namespace(arguments: list[str]):
    from postprocess.cli import build_parser

    return build_parser().parse_args(arguments)
