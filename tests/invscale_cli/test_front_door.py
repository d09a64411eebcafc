"""The `invscale` command (invscale_cli/main.py): one front door over the parts' own command lines, with exit codes
that mean something; and the dead ends it removes (models beside the logs, the lmms-eval version)."""

import json

import pytest

from invscale_cli.main import COMMANDS, main


def test_help_lists_every_command_and_exits_0(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n  {name}" in out for name in COMMANDS)
    assert ".py" not in out  # help explains; it does not point into the code


@pytest.mark.parametrize("argv", [[], ["nope"], ["cait"], ["cait", "nope"], ["report"], ["launch", "run", "--bogus"]])
def test_no_command_an_unknown_one_or_a_bad_option_exit_2(argv, capsys):
    assert main(argv) == 2


@pytest.mark.parametrize("argv", [["report", "--help"], ["launch", "plan", "--help"], ["judges", "adjudicate", "--help"],
                                  ["human", "stats", "--help"], ["cait", "reeval", "--help"], ["tasks", "export", "--help"]])
def test_each_group_shows_its_commands_help_under_the_invscale_name(argv, capsys):
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"usage: invscale {' '.join(argv[:-1])} ")


@pytest.mark.parametrize("group, command", [("cait", "validate"), ("cait", "prepare"), ("cait", "reeval"), ("cait", "build"),
                                            ("cait", "quality"), ("cait", "lora"), ("tasks", "cait-validate"),
                                            ("launch", "check-offline"), ("judges", "taxonomy"), ("human", "export")])
def test_a_nested_commands_usage_line_names_the_program_and_the_command_once(group, command, capsys):
    """`invscale cait validate --help` once said `usage: invscale cait cait-validate`."""
    assert main([group, command, "--help"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"usage: invscale {group} {command} [-h]")


def test_one_spelling_for_the_task_folder(capsys):
    for argv in (["launch", "run", "--help"], ["validate", "--help"], ["tasks", "check", "--help"],
                 ["judges", "adjudicate", "--help"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "--tasks-dir" in out and "--include-path" not in out and "--include_path" not in out.split("options:")[-1]


def test_tasks_list_through_the_front_door(capsys):
    assert main(["tasks", "list"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("64 tasks")


def test_a_registry_beside_the_logs_is_read_without_a_flag(tmp_path, capsys):
    from postprocess.cli.logs import registry_files

    logs = tmp_path / "logs"
    logs.mkdir()
    assert registry_files([logs], []) == []
    (logs / "extra_models.yaml").write_text("models: []\n")
    assert registry_files([logs], []) == [(logs / "extra_models.yaml").resolve()]
    assert "found in the logs folder" in capsys.readouterr().err
    given = [logs / "extra_models.yaml"]
    assert registry_files([logs], given) == given  # named with --extra-models too: read once


def test_the_version_the_launcher_records_beside_a_run_wins_over_lmms_evals_git_string(tmp_path):
    from postprocess.logs.runs import VERSION_FILE, recorded_version

    run = tmp_path / "run"
    results = run / "model" / "20260101_000000_results.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps({"lmms_eval_version": "main@1a2b3c4d"}))
    assert recorded_version(results) is None
    (run / VERSION_FILE).write_text("0.7.3\n")
    assert recorded_version(results) == "0.7.3"


def test_the_launcher_finds_the_lmms_eval_version_of_the_interpreter_it_runs():
    import importlib.metadata
    import sys

    from launch.runner import lmms_eval_version

    assert lmms_eval_version([sys.executable, "-m", "lmms_eval"]) == importlib.metadata.version("lmms-eval")
    assert lmms_eval_version(["/opt/wrapper.sh", "--tasks", "x"]) is None  # not an interpreter: nothing guessed


def test_a_report_with_no_eligible_comparison_says_why_and_what_to_do(tmp_path, capsys):
    from postprocess.cli import main as postprocess_main
    from analysis_factory import write_constructed_logs

    registry = write_constructed_logs(tmp_path)
    assert postprocess_main(["report", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out"),
                             "--extra-models", str(registry), "--min-n", "100000"]) == 0
    captured = capsys.readouterr()
    assert "0 cases over 0 eligible comparisons" in captured.out
    assert "fewer than --min-n 100000 (a --limit run is too small)" in captured.err


def test_the_slurm_scripts_take_their_interpreter_from_the_environment_or_a_flag(tmp_path, capsys):
    from launch.__main__ import main as launch_main

    out = tmp_path / "runs"
    assert launch_main(["slurm", "--models", "Qwen3-VL-2B", "--tasks", "invscale_mme_test", "--out", str(out),
                        "--python", "/cluster/env/bin/python"]) == 0
    [script] = (out / "slurm").glob("*.sbatch")
    assert 'exec "${INVSCALE_PYTHON:-/cluster/env/bin/python}" -m launch run' in script.read_text()


def test_questions_that_cannot_be_loaded_say_how_to_point_at_local_data(tmp_path):
    from postprocess.logs.questions import QuestionSourceError, load_split

    block = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": [str(tmp_path / "missing.jsonl")]}},
             "test_split": "test"}
    with pytest.raises(QuestionSourceError, match=r"give --tasks-dir DIR .* or --data TASK=PATH for local data"):
        load_split(block, "MME test")


def test_human_import_without_the_label_studio_client_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "label_studio_sdk", None)  # as where it is not installed
    assert main(["human", "import", "--project", "1", "--out", str(tmp_path / "a.csv")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(errors) == 1 and errors[0].startswith("error: the Label Studio client cannot be imported")
    assert "scripts/setup_label_studio.sh" in errors[0] and "[labelstudio]" in errors[0]


def test_version_names_ours_and_lmms_evals(capsys):
    import importlib.metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == (f"invscale {importlib.metadata.version('vlm-inverse-scaling')} "
                                       f"(lmms-eval {importlib.metadata.version('lmms-eval')})\n")


@pytest.mark.parametrize("group", ["launch", "demo", "judges", "human", "validate", "report", "tasks", "cait"])
def test_each_groups_help_describes_it_under_the_invscale_name(group, capsys):
    """`launch --help` once showed `python -m launch` usage lines, `judges` and `human` the whole analysis's text,
    `validate` no description."""
    assert main([group, "--help"]) == 0
    out = capsys.readouterr().out
    assert "python -m launch" not in out and "python -m invscale_demo" not in out
    assert "Reads lmms-eval logs and writes the inverse-scaling analysis" not in out
    assert len(out.split("\n\n")[1].strip()) > 40  # a description after the usage lines
