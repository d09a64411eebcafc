"""`validate` (lmms_eval_tasks/validation.py): local benchmark data checked row by row before a model loads;
every bad row listed with its file, row and field; `export` and `install` refuse data that fails it."""

import json
from pathlib import Path

import datasets
import pytest

from invscale_demo.fixtures import mmbench_rows, write_fixtures
from lmms_eval_tasks.__main__ import main as tasks_main
from lmms_eval_tasks.install import export_tasks
from lmms_eval_tasks.validation import check_data, check_task_folder_data


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> dict[str, str]:
    return write_fixtures(tmp_path_factory.mktemp("validate_fixtures"))


def test_every_bundled_fixture_is_valid(fixtures):
    for task, source in fixtures.items():
        check = check_data(task, source)
        assert check.problems == [], task
        assert check.questions > 0


def bad_mmbench(folder: Path) -> Path:
    """The MMBench fixture with a gold outside the options (row 2), an option gap (row 3) and an image that is
    not one (row 5): three bad rows among six."""
    rows, features = mmbench_rows(6)
    rows[1]["answer"] = "E"
    rows[2]["B"] = None
    rows[4]["image"] = {"bytes": b"not a png", "path": None}
    path = folder / "mmbench_dev_en.parquet"
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
    return path


def test_every_bad_row_is_listed_with_its_file_row_and_field(tmp_path):
    path = bad_mmbench(tmp_path)
    check = check_data("invscale_mmbench_dev_en", str(path))
    assert (check.rows, check.questions, len(check.problems)) == (6, 3, 3)
    gold, gap, image = check.problems
    assert gold == f"{path} row 2 (question '1'): answer 'E' is not one of the 4 option letters"
    assert gap.startswith(f"{path} row 3 (question '2'): ") and "option columns ['A', 'C', 'D'] leave a gap" in gap
    assert image == (f"{path} row 5 (question '1000000'): field 'image' (image bytes): not a readable image (not a format "
                     "Pillow reads, or empty)")
    # One numbering per line (the file's row, from 1), never the adapter's 0-based position or an object's repr.
    assert all(problem.count(" row ") == 1 and " at 0x" not in problem for problem in check.problems)


def test_an_empty_image_the_question_shows_is_a_bad_row(tmp_path, fixtures):
    rows = [json.loads(line) for line in Path(fixtures["invscale_mme_test"]).read_text().splitlines()]
    rows[0]["image"] = None
    path = tmp_path / "mme_test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert check_data("invscale_mme_test", str(path)).problems == [
        f"{path} row 1 (question {rows[0]['question_id']!r}): field 'image': empty, but the question shows this image"]


def test_a_repeated_question_id_names_both_rows(tmp_path):
    rows, features = mmbench_rows(6)
    rows[5]["index"] = rows[0]["index"]
    path = tmp_path / "mmbench_dev_en.parquet"
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
    assert check_data("invscale_mmbench_dev_en", str(path)).problems == [
        f"{path} row 6 (question '0'): the question id repeats {path} row 1"]


def test_the_command_exits_1_listing_the_rows_and_export_writes_nothing(tmp_path, capsys):
    path = bad_mmbench(tmp_path)
    assert tasks_main(["validate", "--data", f"invscale_mmbench_dev_en={path}"]) == 1
    errors = capsys.readouterr().err
    assert f"invscale_mmbench_dev_en: 3 bad row(s) among 6 rows of {path}:" in errors
    assert errors.count(f"{path} row ") == 3
    out = tmp_path / "tasks"
    assert tasks_main(["export", str(out), "--data", f"invscale_mmbench_dev_en={path}"]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert not out.exists()


def test_a_task_folder_is_checked_for_its_local_data_and_hub_tasks_are_named_not_checked(tmp_path, fixtures):
    folder = export_tasks(tmp_path / "tasks", {"invscale_mmbench_dev_en": str(bad_mmbench(tmp_path)),
                                               "blink_val": fixtures["blink_val"]})
    checks, hub = check_task_folder_data(folder, ["invscale_mmbench_dev_en_cot", "blink_val", "invscale_mme_test"])
    assert [(check.task, len(check.problems)) for check in checks] == [("invscale_mmbench_dev_en", 3), ("blink_val", 0)]
    assert hub == ["invscale_mme_test"]
    assert tasks_main(["validate", "--tasks-dir", str(folder)]) == 1


def test_launch_run_stops_on_bad_local_data_before_any_model_loads(tmp_path, capsys):
    from launch.__main__ import main as launch_main

    folder = export_tasks(tmp_path / "tasks", {"invscale_mmbench_dev_en": str(bad_mmbench(tmp_path))})
    out = tmp_path / "runs"
    assert launch_main(["run", "--models", "Qwen3-VL-2B", "--tasks", "invscale_mmbench_dev_en", "--out", str(out),
                        "--tasks-dir", str(folder), "--lmms-eval-cmd", "false"]) == 2
    error = capsys.readouterr().err
    assert "bad rows in the local data, nothing was run" in error and error.count(" row ") >= 3
    assert not out.exists()


def test_rows_without_an_image_are_found_from_the_arrow_column_without_reading_the_images():
    """questions_for keeps the rows that hold an image (bytes or a path; not null, "" or an empty list), telling
    them from the Arrow column alone: reading a split's photos into Python to check took gigabytes."""
    import io

    from PIL import Image

    from lmms_eval_tasks.hooks import _has_image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, format="PNG")
    rows = [{"image": {"bytes": buffer.getvalue(), "path": None}, "path": "a.png", "images": ["x"]},
            {"image": None, "path": "", "images": []},
            {"image": {"bytes": None, "path": "b.png"}, "path": None, "images": None}]
    features = datasets.Features({"image": datasets.Image(), "path": datasets.Value("string"),
                                  "images": datasets.Sequence(datasets.Value("string"))})
    dataset = datasets.Dataset.from_list(rows, features=features)
    assert _has_image(dataset, "image") == [True, False, True]
    assert _has_image(dataset, "path") == [True, False, False]
    assert _has_image(dataset, "images") == [True, False, False]
    assert _has_image(dataset.select([2, 1, 0]), "image") == [True, False, True]  # an index mapping is followed
    with pytest.raises(Exception, match="no image column 'picture'"):
        _has_image(dataset, "picture")


def test_a_parquet_file_with_no_rows_is_said_and_exits_1(tmp_path, capsys):
    rows, features = mmbench_rows(2)
    path = tmp_path / "mmbench_dev_en.parquet"
    datasets.Dataset.from_list(rows, features=features).select([]).to_parquet(str(path))
    assert tasks_main(["validate", "--data", f"invscale_mmbench_dev_en={path}"]) == 1
    assert f"invscale_mmbench_dev_en: no rows in {path}:\n  {path}: the file has no rows" in capsys.readouterr().err
