"""Fault scripts on the report command: what a user who breaks things gets. Each fault is one clear
line (exit 2) or a named warning, never a traceback; runs and rows never vanish quietly; file ages
never choose between runs; settings that differ within a compared pair are flagged; OUT is written whole
or not at all; Markdown escapes what it prints. The `python -m postprocess report` runs are the real CLI
in a fresh process; the others call the same entry point in this process (faster)."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml
from logfactory import make_records, tiny_family_registry_dict, write_run

from postprocess.cli import main

REPO = Path(__file__).resolve().parents[1]
SIZES = {"s": [True] * 30, "m": [True] * 20 + [False] * 10, "l": [False] * 12 + [True] * 18}
ODD_LABEL = "a|b\n<script>alert(1)</script> `tick` *star*"


def tiny_logs(root: Path, subtask: str = "Jigsaw") -> Path:
    """Three sizes of a tiny family on BLINK val (the larger models lose questions: cases); returns the
    registry YAML for --extra-models."""
    for size, outcomes in SIZES.items():
        write_run(root / "logs", f"/tmp/models/tiny-{size}", "blink_val",
                  make_records(outcomes, benchmark="BLINK", split="val", subtask=subtask))
    registry = root / "tiny.yaml"
    registry.write_text(yaml.safe_dump(tiny_family_registry_dict()))
    return registry


def report_args(root: Path, out: Path, *extra: str) -> list[str]:
    return ["report", "--logs", str(root / "logs"), "--out", str(out), "--extra-models", str(root / "tiny.yaml"),
            "--min-n", "10", *extra]


def cli(args: list[str], limit_file_bytes: int | None = None) -> subprocess.CompletedProcess:
    """`python -m postprocess ARGS` in a fresh process (optionally with a file-size limit: writes past it fail
    with EFBIG, as on a full disk)."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))

    done = subprocess.run([sys.executable, "-m", "postprocess", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)},
                          preexec_fn=limit if limit_file_bytes else None)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr
    return errors[0]


def folder_state(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------- runs not read
def test_runs_that_cannot_be_read_are_named_and_strict_stops(tmp_path):
    tiny_logs(tmp_path)
    orphan = write_run(tmp_path / "logs", "/tmp/models/tiny-m", "blink_val", make_records([True] * 5),
                       timestamp="20250301_000000", write_results=False)
    odd = write_run(tmp_path / "logs", "/tmp/models/tiny-l", "blink_val", make_records([True] * 5),
                    timestamp="20250302_000000")
    odd.results.write_text(json.dumps({"config": ["qwen3_vl"], "n-samples": {"blink_val": {"effective": "5"}}}))
    out = tmp_path / "out"

    done = cli(report_args(tmp_path, out))
    assert done.returncode == 0, done.stderr
    warning = next(line for line in done.stderr.splitlines() if line.startswith("warning: 2 runs or samples files"))
    assert str(orphan.samples) in warning and str(odd.results) in warning and "config: is a JSON array" in warning
    report = (out / "report.md").read_text()
    section = report[report.index("**Runs and samples files not read**"):]
    assert str(orphan.samples) in section and str(odd.results) in section
    problems = pd.read_csv(out / "problems.csv")
    assert problems[["kind", "file", "field"]].fillna("").values.tolist() == [
        ["bad_results_file", str(odd.results), "config"], ["orphan_samples", str(orphan.samples), ""]]
    assert json.loads((out / "summary.json").read_text())["data_quality"]["runs_not_read"] == 2

    before = folder_state(out)
    strict = cli(report_args(tmp_path, out, "--strict"))
    assert strict.returncode == 2
    line = one_error_line(strict.stderr)
    assert line.startswith("error: --strict: 2 runs, files or lines were skipped: ")
    assert str(orphan.samples) in line and str(odd.results) in line
    assert folder_state(out) == before  # nothing written


def test_every_skipped_line_is_in_problems_csv_and_strict_names_the_first(tmp_path, capsys):
    tiny_logs(tmp_path)
    bad = write_run(tmp_path / "logs", "/tmp/models/tiny-s", "blink_val_cot",
                    make_records([True] * 3, benchmark="BLINK", split="val", variant="cot"),
                    extra_lines=['{"doc_id": 9, "per_question": {"benchmark": "Nope"}}', "{oops"], truncate_last=True)
    assert main(report_args(tmp_path, tmp_path / "out")) == 0
    notes = capsys.readouterr().err
    assert f"note: 2 lines skipped (1 invalid_record, 1 truncated_line); first: {bad.samples}:4" in notes
    problems = pd.read_csv(tmp_path / "out" / "problems.csv")
    assert list(problems.columns) == ["kind", "action", "file", "line", "field", "detail", "model", "benchmark"]
    assert problems[["kind", "line", "field"]].fillna("").values.tolist() == [
        ["invalid_record", 4, "per_question.split"], ["truncated_line", 5, ""]]
    assert (problems["file"] == str(bad.samples)).all() and problems["detail"].notna().all()

    assert main(report_args(tmp_path, tmp_path / "strict", "--strict")) == 2
    assert one_error_line(capsys.readouterr().err).startswith(
        f"error: --strict: 2 runs, files or lines were skipped: {bad.samples}:4 (invalid_record: per_question.")
    assert not (tmp_path / "strict").exists()


def test_a_model_that_loses_its_samples_file_is_said_on_the_console(tmp_path, capsys):
    """results.json lists blink_val but its samples file is gone: Tiny-L drops out, and the console says so."""
    tiny_logs(tmp_path)
    samples = tmp_path / "logs" / "models__tiny-l" / "20250101_120000_samples_blink_val.jsonl"
    samples.unlink()
    assert main(report_args(tmp_path, tmp_path / "out")) == 0
    err = capsys.readouterr().err
    lost = next(line for line in err.splitlines() if line.startswith("warning: 1 runs lack questions"))
    assert "Tiny-L: " in lost and "missing_samples" in lost and samples.name in lost
    assert "warning: 1 models have runs but no rows, so they drop out of the analysis: Tiny-L" in err


def test_a_samples_file_shorter_than_results_json_says_is_said(tmp_path, capsys):
    tiny_logs(tmp_path)
    samples = tmp_path / "logs" / "models__tiny-m" / "20250101_120000_samples_blink_val.jsonl"
    samples.write_text("".join(samples.read_text().splitlines(keepends=True)[:20]))
    assert main(report_args(tmp_path, tmp_path / "out")) == 0
    lost = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: 1 runs lack"))
    assert f"Tiny-M: {samples} (short_samples: 20 lines for the 30 questions results.json says were asked" in lost
    problems = pd.read_csv(tmp_path / "out" / "problems.csv")
    assert problems[["kind", "action", "field"]].values.tolist() == [
        ["short_samples", "reported", "n-samples.blink_val.effective"]]


def test_a_fifo_named_like_a_samples_file_is_not_opened(tmp_path):
    tiny_logs(tmp_path)
    fifo = tmp_path / "logs" / "models__tiny-s" / "20250101_120000_samples_blink_val_cot.jsonl"
    os.mkfifo(fifo)
    done = cli(report_args(tmp_path, tmp_path / "out"))  # would wait for a writer forever
    assert done.returncode == 0, done.stderr
    warning = next(line for line in done.stderr.splitlines() if line.startswith("warning: 1 runs or samples files"))
    assert f"{fifo} (not_a_file: named like a samples file but not a regular file" in warning


# ---------------------------------------------------------------------------------------------- duplicates
def _duplicate_large_run(root: Path) -> tuple:
    """A second run of Tiny-L, started later, that answers every question right."""
    first = root / "logs" / "models__tiny-l" / "20250101_120000_samples_blink_val.jsonl"
    later = write_run(root / "logs", "/tmp/models/tiny-l", "blink_val",
                      make_records([True] * 30, benchmark="BLINK", split="val", subtask="Jigsaw"),
                      timestamp="20250105_000000")
    return first, later


def test_file_ages_never_choose_the_run(tmp_path):
    tiny_logs(tmp_path)
    first, later = _duplicate_large_run(tmp_path)
    first_results = first.with_name("20250101_120000_results.json")
    runs = []
    for newer, older in (((first, first_results), (later.samples, later.results)),
                         ((later.samples, later.results), (first, first_results))):
        for paths, age in ((newer, 4e9), (older, 1e9)):  # each run's files the newer ones on disk in turn
            for path in paths:
                os.utime(path, (age, age))
        done = cli(report_args(tmp_path, tmp_path / "out"))
        assert done.returncode == 0, done.stderr
        runs.append(((tmp_path / "out" / "cases.csv").read_text(),
                     json.loads((tmp_path / "out" / "summary.json").read_text())))
        warning = next(line for line in done.stderr.splitlines() if "pairs of runs hold the same questions" in line)
        assert f"kept {later.results} over {first_results}" in warning
    assert runs[0] == runs[1]
    assert runs[0][1]["cases"] == 1  # the later Tiny-L run answers everything right: only Tiny-S vs Tiny-M is left
    pairs = pd.read_csv(tmp_path / "out" / "tables" /
                        "quality_duplicate_runs_runs_of_one_model_holding_the_same_questions.csv")
    assert pairs[["kept_run", "dropped_run", "duplicate_rows", "answers_differ", "settings_differ",
                  "kept_because"]].values.tolist() == [[str(later.results), str(first_results), 30, 12, "none",
                                                        "newest timestamp"]]
    assert str(later.results) in (tmp_path / "out" / "report.md").read_text()


def test_duplicates_rule_oldest_and_error(tmp_path, capsys):
    tiny_logs(tmp_path)
    _duplicate_large_run(tmp_path)
    assert main(report_args(tmp_path, tmp_path / "oldest", "--duplicates", "oldest")) == 0
    assert json.loads((tmp_path / "oldest" / "summary.json").read_text())["cases"] == 2  # Tiny-L loses 12 again
    assert main(report_args(tmp_path, tmp_path / "error", "--duplicates", "error")) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "1 pairs of runs hold the same questions" in line and "20250105_000000_results.json" in line


# ---------------------------------------------------------------------------------------------- settings
def test_generation_settings_that_differ_within_a_pair_are_flagged(tmp_path, capsys):
    tiny_logs(tmp_path)
    for size, tokens, backend in (("s", 16, "qwen3_vl"), ("m", 16, "qwen3_vl"), ("l", 2048, "vllm")):
        path = tmp_path / "logs" / f"models__tiny-{size}" / "20250101_120000_results.json"
        results = json.loads(path.read_text())
        results["config"].update(gen_kwargs=f"max_new_tokens={tokens}", model=backend)
        path.write_text(json.dumps(results))
    assert main(report_args(tmp_path, tmp_path / "out")) == 0
    warning = [line for line in capsys.readouterr().err.splitlines() if "different generation settings" in line]
    assert warning == ["warning: 2 compared pairs ran with different generation settings (Tiny-S vs Tiny-L; "
                       "Tiny-M vs Tiny-L); the report's data-quality section lists them"]
    quality = json.loads((tmp_path / "out" / "summary.json").read_text())["data_quality"]
    assert (quality["settings_differ_pairs"], quality["settings_differences"]) == (2, 4)
    table = pd.read_csv(tmp_path / "out" / "tables" /
                        "quality_generation_settings_that_differ_within_compared_pairs_smaller_vs_larger_model.csv",
                        dtype=str)
    assert sorted(table[["small", "large", "setting", "small_value", "large_value"]].values.tolist()) == [
        ["Tiny-M", "Tiny-L", "backend", "qwen3_vl", "vllm"],
        ["Tiny-M", "Tiny-L", "gen_kwargs.max_new_tokens", "16", "2048"],
        ["Tiny-S", "Tiny-L", "backend", "qwen3_vl", "vllm"],
        ["Tiny-S", "Tiny-L", "gen_kwargs.max_new_tokens", "16", "2048"],
    ]
    assert set(table["datasets"]) == {"BLINK val direct"}
    assert "gen_kwargs.max_new_tokens" in (tmp_path / "out" / "report.md").read_text()


# ---------------------------------------------------------------------------------------------- outputs
def test_output_faults_are_one_line_and_leave_out_as_it_was(tmp_path):
    tiny_logs(tmp_path)
    (tmp_path / "a_file").write_text("x")
    for out, expected in ((tmp_path / "a_file", "is a file, not a folder"),
                          (tmp_path / "a_file" / "below", "lies under"),
                          (Path("/proc/no/such/report"), "cannot write /proc/no/such/report")):
        done = cli(report_args(tmp_path, out))
        assert done.returncode == 2 and expected in one_error_line(done.stderr), done.stderr

    out = tmp_path / "out"
    assert cli(report_args(tmp_path, out)).returncode == 0
    before = folder_state(out)
    full = cli(report_args(tmp_path, out, "--min-net", "1"), limit_file_bytes=64_000)  # report.html is larger
    assert full.returncode == 2
    line = one_error_line(full.stderr)
    assert line.startswith(f"error: cannot write {out}: [Errno 27] File too large") and line.endswith(
        f"{out} was left as it was")
    assert folder_state(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "logs", "out", "tiny.yaml"]  # no staging left


def test_a_new_report_replaces_the_old_one_whole_and_keeps_the_users_files(tmp_path, capsys):
    tiny_logs(tmp_path)
    out = tmp_path / "out"
    assert main(report_args(tmp_path, out)) == 0
    (out / "notes.txt").write_text("mine")
    (out / "tables" / "my_table.csv").write_text("mine")
    stale = out / "tables" / "table99_from_an_older_version.md"
    stale.write_text("old output")
    manifest = json.loads((out / ".report_files.json").read_text())
    (out / ".report_files.json").write_text(json.dumps([*manifest, "tables/table99_from_an_older_version.md"]))
    capsys.readouterr()
    assert main(report_args(tmp_path, out, "--min-net", "1")) == 0
    assert "note: kept 2 file(s) of yours in" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine" and (out / "tables" / "my_table.csv").read_text() == "mine"
    assert not stale.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "out", "tiny.yaml"]


def test_a_folder_of_other_files_is_not_taken_as_out(tmp_path, capsys):
    """`--out .` in a project: the project is not moved aside."""
    tiny_logs(tmp_path)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "code.py").write_text("print(1)")
    (project / "notes.md").write_text("notes")
    before = folder_state(project)
    assert main(report_args(tmp_path, project)) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line == (f"error: output folder {project} holds files that report did not write (notes.md, src); give a "
                    "new or empty folder, or a previous report's")
    assert folder_state(project) == before
    assert main(["report", "--logs", str(project / "notes.md"), "--out", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys.readouterr().err) == f"error: --logs {project / 'notes.md'} is a file, not a folder"


def test_a_truncated_or_odd_reeval_file_is_one_line(tmp_path, capsys):
    tiny_logs(tmp_path)
    reeval = tmp_path / "reeval"
    reeval.mkdir()
    items = reeval / "cait_reeval_items.csv"
    header = "judge,model,scene,category,source,gold,answer,finish_reason,prediction,correct,status\n"
    for content, expected in ((header + "j,m,s,c,description,A,A,stop,A,True,ok\nj,m,s2,c,descr", "cut short"),
                              ("judge,model\nj,m\n", "lacks the columns"),
                              (header + "j,m,s,c,description,A,A,stop,A,maybe,ok\n", ":2: field 'correct' is 'maybe'"),
                              (header + 'j,m,"s,c\n', "not a readable cait-reeval items file")):
        items.write_text(content)
        assert main([*report_args(tmp_path, tmp_path / "out"), "--reeval", str(reeval)]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith(f"error: {items}") and expected in line, line


# ---------------------------------------------------------------------------------------------- cache
def test_a_damaged_cache_is_rebuilt_with_a_notice(tmp_path):
    tiny_logs(tmp_path)
    cache = tmp_path / "cache"
    assert cli(report_args(tmp_path, tmp_path / "out", "--cache-dir", str(cache))).returncode == 0
    entry = next(cache.glob("ingest-*"))
    (entry / "meta.json").unlink()
    (entry / "table.parquet").write_bytes((entry / "table.parquet").read_bytes()[:100])
    done = cli(report_args(tmp_path, tmp_path / "out", "--cache-dir", str(cache)))
    assert done.returncode == 0
    assert f"cache: {entry} is damaged (meta.json is missing); rebuilding it" in done.stderr.splitlines()
    again = cli(report_args(tmp_path, tmp_path / "out", "--cache-dir", str(cache), "--refresh"))
    assert again.returncode == 0 and "cache:" not in again.stderr


# ---------------------------------------------------------------------------------------------- escaping
def test_markdown_and_html_escape_what_they_print(tmp_path):
    tiny_logs(tmp_path, subtask=ODD_LABEL)
    out = tmp_path / "out"
    assert main(report_args(tmp_path, out)) == 0
    markdown = (out / "report.md").read_text() + (out / "tables" / "table03_top_cases.md").read_text()
    assert not re.search(r"(?<!\\)</?script>", markdown) and "\\<script>alert(1)\\</script>" in markdown
    escaped = "a\\|b<br>\\<script>alert(1)\\</script> \\`tick\\` \\*star\\*"
    rows = [line for line in markdown.splitlines() if escaped in line]
    # one table row or explorer link each, unsplit
    assert rows and all(line.startswith("|") and line.endswith("|") or line.startswith("- [") and line.endswith(".html)")
                        for line in rows)
    html = (out / "report.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for page in (out / "explorer" / "pages").glob("*.html"):  # the label is text in the title, data in the JSON
        text = page.read_text()
        assert "<title>" in text and "alert(1)</script>" not in text and "&lt;script&gt;alert(1)" in text
    shutil.rmtree(out)
