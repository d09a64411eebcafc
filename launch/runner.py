"""Run the real lmms-eval CLI and check what it wrote.

lmms-eval exits 0 even when evaluation raised, so a run is judged by its files: one results.json and
one non-empty samples JSONL per task under the model's output folder. A complete run counts only when
results.json records the settings the command asks for (settings_difference): a `--limit 5` smoke test,
or a run with other model_args or gen_kwargs, is never taken for the run asked for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from postprocess.logs.runs import RESULTS_SUFFIX, SAMPLES_MARKER, VERSION_FILE, read_results, samples_files_of

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
# lmms-eval's chat wrappers encode images in this format (protocol.py); PNG is lossless, JPEG would alter pixels
PROTOCOL_ENV = {"LMMS_IMAGE_ENCODE_FORMAT": "PNG"}
# the lmms-eval flags whose values a complete run must have been given (results.json resolved_cli_args)
RECORDED_FLAGS = {"--model_args": "model_args", "--gen_kwargs": "gen_kwargs", "--limit": "limit", "--device": "device"}


class RunFailed(RuntimeError):
    """An lmms-eval run that did not leave complete results; the message says what is missing and where the log is."""


@dataclass(frozen=True)
class RunOutput:
    results: Path
    samples: dict[str, Path]  # task -> samples JSONL
    log: Path
    seconds: float


# lmms-eval 0.7.0's chat wrappers of these read self.fps, which their simple parent never sets: every request
# fails ("'Qwen3_VL' object has no attribute 'fps'"; fixed in 0.7.1). Seen in CLI runs on tiny models.
CHAT_WRAPPERS_BROKEN_IN_0_7_0 = frozenset({"qwen3_vl", "qwen2_5_vl"})


def _lmms_eval_0_7_0() -> bool:
    import importlib.metadata

    return importlib.metadata.version("lmms-eval") in ("0.7", "0.7.0")


def simple_wrapper_forced(model: str) -> bool:
    """Whether `model` must run through lmms-eval's simple wrapper (--force_simple) with the installed lmms-eval
    (CHAT_WRAPPERS_BROKEN_IN_0_7_0). The simple wrapper answers the same prompts and images, without token
    counts or timing."""
    return model in CHAT_WRAPPERS_BROKEN_IN_0_7_0 and _lmms_eval_0_7_0()


def installed_model_args(model: str, model_args: str) -> str:
    """The --model_args the installed lmms-eval takes. 0.7.0's vllm wrapper has no max_new_tokens argument: it
    would reach vllm.LLM as an engine argument, which vLLM refuses, so every run would fail at start. It is
    dropped there, with no change of budget: 0.7.0 gives each request the task's (or --gen_kwargs') budget, which
    is what the max_new_tokens floor of the registry's vLLM rows leaves in force on >= 0.7.1."""
    if model != "vllm" or not _lmms_eval_0_7_0():
        return model_args
    return ",".join(pair for pair in model_args.split(",") if pair.partition("=")[0].strip() != "max_new_tokens")


def lmms_eval_command(model: str, model_args: str, tasks: list[str], output: Path, *, include_path: Path | None = None,
                      limit: int | None = None, gen_kwargs: str | None = None, batch_size: int = 1,
                      device: str | None = None, launcher: list[str] | None = None) -> list[str]:
    command = [*(launcher or [sys.executable, "-m", "lmms_eval"]), "--model", model,
               "--model_args", installed_model_args(model, model_args),
               "--tasks", ",".join(tasks), "--batch_size", str(batch_size), "--log_samples", "--output_path", str(output)]
    if device:
        command += ["--device", device]
    if include_path:
        command += ["--include_path", str(include_path)]
    if limit is not None:
        command += ["--limit", str(limit)]
    if gen_kwargs:
        command += ["--gen_kwargs", gen_kwargs]
    if simple_wrapper_forced(model):
        command.append("--force_simple")
    return command


def find_outputs(output: Path, tasks: list[str], since: float = 0.0) -> tuple[Path | None, dict[str, Path]]:
    """The newest results.json under output written after `since`, and the samples files of its run."""
    results = sorted((p for p in output.rglob(f"*{RESULTS_SUFFIX}") if p.stat().st_mtime >= since),
                     key=lambda p: p.stat().st_mtime)
    if not results:
        return None, {}
    newest = results[-1]
    samples = samples_files_of(newest)
    return newest, {task: samples[task] for task in tasks if task in samples and samples[task].stat().st_size > 0}


def lmms_eval_version(command: list[str]) -> str | None:
    """The lmms-eval package version of the interpreter the command runs (python, or the one beside accelerate);
    None for another command (a wrapper script) or an interpreter without lmms-eval."""
    head = Path(command[0])
    python = head.with_name("python") if head.name == "accelerate" else head if head.name.startswith("python") else None
    if python is None:
        return None
    if str(python) == sys.executable:
        import importlib.metadata

        try:
            return importlib.metadata.version("lmms-eval")
        except importlib.metadata.PackageNotFoundError:
            return None
    found = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('lmms-eval'))"],
                           capture_output=True, text=True, timeout=120)
    return found.stdout.strip() or None if found.returncode == 0 else None


def run_lmms_eval(command: list[str], output: Path, tasks: list[str], log: Path, env: dict | None = None) -> RunOutput:
    """Run the command, then fail loudly unless results.json and every task's samples file exist and are non-empty.
    The lmms-eval version is written beside the run (VERSION_FILE): results.json records only a git state."""
    output.mkdir(parents=True, exist_ok=True)
    version = lmms_eval_version(command)
    if version:
        (output / VERSION_FILE).write_text(version + "\n", encoding="utf-8")
    started = time.time()
    with open(log, "w") as handle:
        code = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT,
                              env={**os.environ, **OFFLINE_ENV, **(env or {}), **PROTOCOL_ENV}).returncode
    results, samples = find_outputs(output, tasks, since=started - 1)
    missing = [task for task in tasks if task not in samples]
    if code != 0 or results is None or missing:
        reason = f"exit code {code}" if code != 0 else "no results.json" if results is None else f"no samples for {missing}"
        if code == 0:  # lmms-eval logs a task that fails to load or run and still exits 0
            reason += "; lmms-eval exited 0, but a task failed: the log above says why"
        raise RunFailed(f"lmms-eval run failed ({reason}); log: {log}\n{_tail(log)}")
    return RunOutput(results, samples, log, time.time() - started)


def _tail(log: Path, lines: int = 25) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def incomplete_reason(output: Path, tasks: list[str]) -> str | None:
    """Why the newest run under `output` is not a complete run of `tasks`, or None when it is.

    Stricter than run_lmms_eval's check: lmms-eval writes results.json first and then appends the samples
    files line by line, so a run killed while saving leaves a results.json beside short samples files.
    A samples file must also end with a newline and hold as many lines as results.json's
    n-samples[task].effective.
    """
    results, samples = find_outputs(output, tasks)
    if results is None:
        return "no results.json"
    missing = [task for task in tasks if task not in samples]
    if missing:
        return f"no samples file (or an empty one) for {', '.join(missing)} beside {results}"
    facts = read_results(results)
    if facts.problem:
        return f"unreadable {results}: {facts.problem}"
    for task, path in samples.items():
        data = path.read_bytes()
        if not data.endswith(b"\n"):
            return f"{path} ends in a cut-off line"
        effective = facts.effective.get(task)
        lines = sum(1 for line in data.splitlines() if line.strip())
        if effective is not None and lines != effective:
            return f"{path} has {lines} lines, results.json n-samples says {effective}"
    return None


def _normalised(flag: str, value) -> str | None:
    """A flag's value as compared: lmms-eval stores --limit as a float and an absent --gen_kwargs as ""."""
    if value is None or value == "":
        return None
    if flag == "--limit":
        return f"{float(value):g}"
    return str(value)


def settings_difference(results: Path, command: list[str]) -> str | None:
    """What differs between the settings `command` passes and those results.json records, or None.

    lmms-eval 0.7.x records its command line under config.resolved_cli_args; a results.json without it
    (another writer) is not compared. --device is compared only when the command sets it."""
    try:
        recorded = json.loads(Path(results).read_text(encoding="utf-8"))["config"]["resolved_cli_args"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(recorded, dict):
        return None
    differences = []
    for flag, key in RECORDED_FLAGS.items():
        asked = _normalised(flag, command[command.index(flag) + 1] if flag in command[:-1] else None)
        if flag == "--device" and asked is None:
            continue
        ran = _normalised(flag, recorded.get(key))
        if asked != ran:
            differences.append(f"{flag} {ran if ran is not None else '(none)'} where this run asks for "
                               f"{asked if asked is not None else '(none)'}")
    return "; ".join(differences) or None


def lmms_eval_outputs(output: Path) -> list[Path]:
    """The results.json and samples files anywhere under `output`."""
    return sorted({*output.rglob(f"*{RESULTS_SUFFIX}"), *output.rglob(f"*{SAMPLES_MARKER}*.jsonl")})
