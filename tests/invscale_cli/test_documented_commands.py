"""Every `invscale ...` command in the fenced blocks of README.md and docs/*.md: the ones that run in seconds on
the bundled fixtures run (each must exit 0); every other one names a command that exists (its `--help` exits 0)
and is listed in NOT_RUN with the reason it is not run here. A command added to the docs fails this test until it
is one or the other. (`invscale launch plan ... --tasks inverse_scaling` once failed: the group is `invscale`.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from invscale_cli.main import main

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# Run on the fixtures: the documented command with its paths put under a scratch folder.
RUN = ("invscale tasks list", "invscale validate --data invscale_mmbench_dev_en=", "invscale launch plan ",
       "invscale tasks fixtures ", "invscale cait validate ")
# Not run here, by the command's first words: why.
NOT_RUN = {
    "invscale report": "needs lmms-eval logs: tests/postprocess and tests/test_cli_faults.py run report on fixture logs",
    "invscale launch run": "runs lmms-eval on models (tests/test_lmms_eval_cli.py runs it on tiny models)",
    "invscale launch slurm": "writes Slurm arrays for the 19 paper models (tests/launch covers it)",
    "invscale launch check-offline": "looks for the 19 paper models in the Hugging Face cache (tests/launch covers it)",
    "invscale judges": "calls LLM judges, or reads a judges file and logs (tests/postprocess covers --dry-run)",
    "invscale human": "talks to a Label Studio server or reads its exports (tests/invscale covers them)",
    "invscale cait reeval": "calls LLM judges (tests/postprocess/test_reeval.py)",
    "invscale cait prepare": "needs a CAIT folder of the user's (tests/cait_dataset covers it)",
    "invscale cait build": "runs image generators and judges (tests/cait_dataset covers it offline)",
    "invscale cait quality": "scores images with IQA models and Winoground captions (tests/cait_dataset)",
    "invscale cait lora": "trains and evaluates a LoRA (tests/cait_dataset)",
    "invscale tasks export": "reads the user's data files (tests/lmms_eval_tasks covers export on fixtures)",
    "invscale tasks install": "writes into the installed lmms-eval (tests/lmms_eval_tasks covers it)",
    "invscale tasks uninstall": "writes into the installed lmms-eval (tests/lmms_eval_tasks covers it)",
    "invscale demo": "the whole demo, minutes (tests/test_demo.py runs it)",
    "invscale diff": "compares two report folders (tests/postprocess/test_report_diff.py runs it on two reports)",
}


def documented_commands() -> list[tuple[str, str]]:
    """(file name, command) of every `invscale` line in a fenced block: continuation lines joined, comments and
    [optional parts] dropped."""
    found = []
    for path in DOCS:
        for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.sub(r"\[[^\[\]]*(\[[^\[\]]*\][^\[\]]*)*\]", "", line.split(" #")[0]).strip()
                if command.startswith("invscale "):
                    found.append((path.name, " ".join(command.split())))
    return found


COMMANDS = documented_commands()


def test_the_docs_hold_commands_and_each_is_run_or_said_why_not():
    assert len(COMMANDS) > 40
    unclassified = [(name, command) for name, command in COMMANDS
                    if not command.startswith(RUN) and not any(command.startswith(p) for p in NOT_RUN)]
    assert unclassified == []


@pytest.mark.parametrize("name, command", COMMANDS, ids=[f"{n}:{c[:60]}" for n, c in COMMANDS])
def test_each_documented_command_exists(name, command, capsys):
    words = shlex.split(command)[1:]
    depth = 1 + (words[0] in ("tasks", "launch", "judges", "human", "cait")) + (words[1:2] in (["build"], ["quality"],
                                                                                                ["lora"]))
    path = words[:depth]
    assert main([*path, "--help"]) == 0, f"{name}: {command}"


@pytest.mark.parametrize("name, command", [(n, c) for n, c in COMMANDS if c.startswith(RUN)],
                         ids=[f"{n}:{c[:60]}" for n, c in COMMANDS if c.startswith(RUN)])
def test_the_quick_documented_commands_run_on_the_fixtures(name, command, fixture_data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    words = shlex.split(command)[1:]
    if words[0] == "validate":
        words = [re.sub(r"=.*", "=" + fixture_data["invscale_mmbench_dev_en"], w) for w in words]
    elif words[:2] == ["tasks", "fixtures"]:
        words[2] = str(tmp_path / "fx")
    elif words[:2] == ["cait", "validate"]:
        words[2] = str(Path(fixture_data["cait"]).parent / "cait_folder")  # the folder `prepare` read
    assert main(words) == 0, f"{name}: {command}"
