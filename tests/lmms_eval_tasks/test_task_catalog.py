"""Task names, the YAML folder, and the drop-in install into lmms-eval's own task folder."""

import importlib
import json
import re
from pathlib import Path

import pytest
import yaml

from launch.runner import lmms_eval_command, run_lmms_eval
from lmms_eval_tasks import generate, install
from lmms_eval_tasks.catalog import GROUPS, TASKS
from lmms_eval_tasks.install import INSTALLED_FOLDER, TASKS_DIR, OverrideError, dataset_block, export_tasks

yaml.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}", Loader=yaml.SafeLoader)


def builtin_index():
    from lmms_eval.tasks import TaskManager

    ours = str(install.lmms_eval_tasks_dir() / INSTALLED_FOLDER)
    return {name: entry for name, entry in TaskManager().task_index.items()
            if not str(entry.get("yaml_path", "")).startswith(ours)}


def test_no_task_or_group_name_collides_with_a_builtin_task_group_or_tag():
    tasks_dir = install.lmms_eval_tasks_dir()
    if not any(path for path in tasks_dir.rglob("*.yaml") if INSTALLED_FOLDER not in path.relative_to(tasks_dir).parts):
        pytest.skip("this lmms-eval ships no task YAMLs (PyPI's lmms-eval 0.7.0 wheel): no built-in name to collide with")
    builtin = builtin_index()
    ours = set(TASKS) | set(GROUPS)
    assert len(builtin) > 1000  # the real index, not an empty one
    assert sorted(ours & set(builtin)) == []


def test_names_follow_the_documented_pattern():
    assert "blink_val" in TASKS and "cait" in TASKS
    for name, entry in TASKS.items():
        base_pattern = r"blink_val|cait|invscale_[a-z0-9]+_[a-z_]+"
        assert re.fullmatch(rf"({base_pattern})(_(cot|identity|reverse|shift[123]|swap|structured|describe))?", name), name
        assert name == entry.base or name == f"{entry.base}_{entry.variant}"


def test_the_yaml_folder_holds_exactly_the_catalog():
    files = {p.stem: yaml.safe_load(p.read_text()) for p in TASKS_DIR.glob("*.yaml") if not p.name.startswith("_")}
    tasks = {name: spec for name, spec in files.items() if "task" in spec and "group" not in spec}
    groups = {name: spec for name, spec in files.items() if "group" in spec}
    assert set(tasks) == set(TASKS) and set(groups) == set(GROUPS)
    for name, spec in tasks.items():
        assert spec["task"] == name
        assert spec["process_docs"] == f"!function lmms_eval_tasks.task_hooks.docs_{name}"
    for name, spec in groups.items():
        assert spec["task"] == GROUPS[name]


def test_the_checked_in_yamls_and_hooks_are_the_generated_ones():
    """Edit lmms_eval_tasks/benchmarks.py and run `python -m lmms_eval_tasks generate`, never the YAMLs."""
    for path, text in generate.generated_files().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} differs from its generated text"
    assert generate.stale_files() == []


def test_every_hook_a_yaml_names_is_defined_by_that_name_in_the_source():
    named = set()
    for path in TASKS_DIR.glob("*.yaml"):
        named |= set(re.findall(r"!function ([\w.]+)", path.read_text()))
    assert len(named) > len(TASKS)
    for reference in named:
        module_name, _, function = reference.rpartition(".")
        module = importlib.import_module(module_name)
        assert re.search(rf"^def {function}\(", Path(module.__file__).read_text(), re.MULTILINE), reference
        assert callable(getattr(module, function)), reference


def test_generation_settings_are_the_papers():
    template = yaml.safe_load((TASKS_DIR / "_template.yaml").read_text())
    cot = yaml.safe_load((TASKS_DIR / "_cot.yaml").read_text())
    assert template["generation_kwargs"] == {"max_new_tokens": 2048, "temperature": 0, "do_sample": False, "num_beams": 1}
    assert cot["generation_kwargs"]["max_new_tokens"] == 4096 and cot["generation_kwargs"]["do_sample"] is False


def test_local_overrides_name_the_problem(tmp_path):
    with pytest.raises(OverrideError, match="no such file"):
        dataset_block("blink_val", str(tmp_path / "missing.parquet"))
    with pytest.raises(OverrideError, match="not a base task.*follows its base task blink_val"):
        dataset_block("blink_val_cot", str(tmp_path))
    (tmp_path / "x.xlsx").write_text("")
    with pytest.raises(OverrideError, match="expected .parquet"):
        dataset_block("blink_val", str(tmp_path / "x.xlsx"))


MME_COLUMNS = ("question_id", "question", "answer", "category", "image")  # benchmarks.py: what the MME task reads


def _mme_copies(folder: Path, columns: tuple[str, ...]) -> dict[str, Path]:
    """The same rows in every form --data accepts, holding only `columns`."""
    import datasets
    import pandas as pd

    folder.mkdir()
    frame = pd.DataFrame([{column: f"{column}-{i}" for column in columns} for i in range(3)])
    paths = {suffix: folder / f"mme{suffix}" for suffix in (".parquet", ".jsonl", ".json", ".csv", ".tsv")}
    frame.to_parquet(paths[".parquet"])
    frame.to_json(paths[".jsonl"], orient="records", lines=True)
    frame.to_json(paths[".json"], orient="records", indent=1)
    frame.to_csv(paths[".csv"], index=False)
    frame.to_csv(paths[".tsv"], index=False, sep="\t")
    paths["save_to_disk"] = folder / "mme_saved"
    datasets.DatasetDict({"test": datasets.Dataset.from_pandas(frame)}).save_to_disk(str(paths["save_to_disk"]))
    return paths


@pytest.mark.parametrize("form", [".parquet", ".jsonl", ".json", ".csv", ".tsv", "save_to_disk"])
def test_export_checks_the_benchmarks_columns_in_every_data_form(tmp_path, form):
    good = _mme_copies(tmp_path / "good", MME_COLUMNS)
    assert dataset_block("invscale_mme_test", str(good[form]))["test_split"] == "test"
    bad = _mme_copies(tmp_path / "bad", ("question_id", "question", "image"))
    with pytest.raises(OverrideError, match=r"--data invscale_mme_test=.*lacks the column\(s\) answer, category that "
                                            r"the MME task reads \(question_id, question, answer, category, image\); "
                                            r"it has: question_id, question, image"):
        dataset_block("invscale_mme_test", str(bad[form]))


def test_columns_are_read_from_the_header_only(tmp_path):
    """A JSON Lines file whose second line is broken still shows its columns: nothing past the first record is read."""
    data = tmp_path / "mme.jsonl"
    data.write_text(json.dumps({column: "x" * 3_000_000 for column in MME_COLUMNS}) + "\n{not json\n")
    assert install.file_columns(data) == list(MME_COLUMNS)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(OverrideError, match="lacks the column"):
        dataset_block("invscale_mme_test", str(tmp_path / "empty.csv"))
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(OverrideError, match=r"list.json: cannot read its columns: its first JSON value is a int"):
        dataset_block("invscale_mme_test", str(tmp_path / "list.json"))


def test_export_points_only_the_named_task_at_local_data(tmp_path, fixture_data):
    folder = export_tasks(tmp_path / "tasks", {"blink_val": fixture_data["blink_val"]})
    blink = yaml.safe_load((folder / "blink_val.yaml").read_text())
    assert blink["dataset_kwargs"] == {"load_from_disk": True} and blink["test_split"] == "val"
    assert yaml.safe_load((folder / "invscale_mme_test.yaml").read_text())["dataset_path"] == "lmms-lab-encoder/MME"


@pytest.fixture
def private_lmms_eval(tmp_path, monkeypatch) -> dict[str, str]:
    """A copy of the installed lmms-eval package that the test may install into: the shared environment's own
    task folder stays untouched, so a concurrent lmms-eval run never sees a half-installed copy. Returns the
    environment that makes a subprocess import the copy."""
    import importlib.util
    import os
    import shutil

    site = tmp_path / "site"
    source = Path(next(iter(importlib.util.find_spec("lmms_eval").submodule_search_locations)))
    shutil.copytree(source, site / "lmms_eval", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(install, "lmms_eval_tasks_dir", lambda: site / "lmms_eval" / "tasks")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


@pytest.mark.cli
def test_drop_in_install_lets_plain_lmms_eval_find_the_tasks(tmp_path, fixture_data, tiny_qwen3_vl, private_lmms_eval):
    target = install.install({"blink_val": fixture_data["blink_val"]})
    try:
        command = lmms_eval_command("qwen3_vl", f"pretrained={tiny_qwen3_vl},device_map=cpu", ["blink_val"], tmp_path,
                                    limit=2, gen_kwargs="max_new_tokens=4", device="cpu")  # no --include_path
        run = run_lmms_eval(command, tmp_path, ["blink_val"], tmp_path / "lmms_eval.log", env=private_lmms_eval)
        assert len(run.samples["blink_val"].read_text().splitlines()) == 2
        assert json.loads(run.results.read_text())["results"]["blink_val"]["alias"] == "blink_val"
    finally:
        assert install.uninstall() == target
    assert not target.exists() and install.uninstall() is None


def test_install_from_an_exported_folder_and_the_shadowing_warning(monkeypatch, tmp_path, fixture_tasks, capsys):
    """The fixtures install in two steps; an installed copy that differs from --include_path is named, file by file."""
    from lmms_eval_tasks.__main__ import main as tasks_main

    monkeypatch.setattr(install, "lmms_eval_tasks_dir", lambda: tmp_path / "lmms_eval_tasks")
    assert install.shadowing_warnings(TASKS_DIR) == []
    target = install.install(source=fixture_tasks)
    assert (target / "blink_val.yaml").read_bytes() == (fixture_tasks / "blink_val.yaml").read_bytes()
    [warning] = install.shadowing_warnings(TASKS_DIR)
    assert warning.startswith(f"an installed copy of {len(TASKS)} of these tasks at {target} shadows the task folder "
                              f"{TASKS_DIR}: lmms-eval runs the installed copy and differs from it in 10 file(s): ")
    assert "invscale_mme_test.yaml" in warning and "python -m lmms_eval_tasks uninstall" in warning
    assert "(identical to it today)" in install.shadowing_warnings(fixture_tasks)[0]
    assert tasks_main(["check", "--tasks-dir", str(TASKS_DIR)]) == 1
    assert tasks_main(["check", "--include-path", str(TASKS_DIR)]) == 1  # the older spelling, still accepted
    assert f"installed into lmms-eval: {len(TASKS)} of {len(TASKS)} tasks in {target}" in capsys.readouterr().out
    # a copy somebody placed by hand elsewhere in lmms-eval's folder is found by its task names
    stray = tmp_path / "lmms_eval_tasks" / "mine"
    stray.mkdir()
    (stray / "x.yaml").write_text("task: blink_val\ndataset_path: elsewhere\n")
    assert any(w.startswith(f"an installed copy of 1 of these tasks at {stray}") for w in install.shadowing_warnings(fixture_tasks))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "blink_val.yaml").write_text("task: blink_val\n")
    with pytest.raises(OverrideError, match=r"--from .*half: not a task folder written by `python -m lmms_eval_tasks "
                                            r"export`: \d+ file\(s\) missing, e.g. _template.yaml"):
        install.install(source=tmp_path / "half")
    with pytest.raises(OverrideError, match="--from and --data exclude each other"):
        install.install({"blink_val": "x"}, source=fixture_tasks)
    assert install.uninstall() == target


def test_the_launcher_warns_when_an_installed_copy_shadows_its_include_path(monkeypatch, tmp_path, fixture_tasks, capsys):
    from launch.__main__ import main as launch_main

    monkeypatch.setattr(install, "lmms_eval_tasks_dir", lambda: tmp_path / "lmms_eval_tasks")
    install.install(source=fixture_tasks)
    assert launch_main(["plan", "--models", "Gemma-3-4B", "--tasks", "blink_val", "--out", str(tmp_path)]) == 0
    assert f"WARNING: an installed copy of {len(TASKS)} of these tasks at" in capsys.readouterr().err


def test_install_refuses_to_overwrite_a_folder_it_did_not_write(monkeypatch, tmp_path):
    monkeypatch.setattr(install, "lmms_eval_tasks_dir", lambda: tmp_path)
    (tmp_path / INSTALLED_FOLDER).mkdir()
    with pytest.raises(OverrideError, match="not installed by this tool"):
        install.install()
    with pytest.raises(OverrideError, match="not installed by this tool"):
        install.uninstall()
