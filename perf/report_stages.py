"""Where a `report` run spends its CPU time, stage by stage, in one process.

    PYTHONPATH=CHECKOUT python perf/report_stages.py -- REPORT ARGUMENTS...
    e.g. python perf/report_stages.py -- --logs LOGS --out OUT --cache-dir CACHE [--explorer none]

Runs `python -m postprocess report ARGUMENTS` in this process with a CPU timer (time.process_time: user + system
of this process) around each stage function of STAGES, and around every module import (the import system's
_find_and_load). Prints per stage its calls, its CPU seconds including what it calls (nested stages included)
and the part of them spent importing modules it was the first to need. "startup" is the interpreter's own start
before this script ran; "imports outside stages" the modules loaded by the command's own imports. A stage that
the run does not reach prints nothing. Figures are indicative: the timers add a little, and a stage that runs
first pays for lazy imports another would have paid. The run's outputs are the report's own (OUT is written).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import time

STARTUP = time.process_time()  # the interpreter's start, before this module ran

# (module, attribute) of each stage function, patched where its callers look it up.
STAGES = [
    ("postprocess.cli.logs", "ingest"),
    ("model_configs", "load_registry"),
    ("postprocess.logs.cache", "load_or_ingest"),
    ("postprocess.logs.adjudications", "apply_adjudications"),
    ("postprocess.inverse_scaling.analysis", "run_analysis"),
    ("postprocess.inverse_scaling.settlement", "resolve"),
    ("postprocess.inverse_scaling.analysis", "build_outcomes"),
    ("postprocess.inverse_scaling.analysis", "compare_pairs"),
    ("postprocess.inverse_scaling.analysis", "add_significance"),
    ("postprocess.inverse_scaling.accuracy", "accuracy_by_subtask"),
    ("postprocess.inverse_scaling.cases", "cases_by_family"),
    ("postprocess.inverse_scaling.cases", "curve_shapes"),
    ("postprocess.inverse_scaling.settlement", "unsettled_counts"),
    ("postprocess.inverse_scaling.analysis", "_add_controls"),
    ("postprocess.inverse_scaling.credibility", "shared_answers"),
    ("postprocess.inverse_scaling.credibility", "comparison_flips"),
    ("postprocess.inverse_scaling.credibility", "run_to_run_noise"),
    ("postprocess.inverse_scaling.credibility", "extraction_exposure"),
    ("postprocess.inverse_scaling.credibility", "case_verdicts"),
    ("postprocess.inverse_scaling.credibility", "verdict_summary"),
    ("postprocess.inverse_scaling.trend", "family_trends"),
    ("postprocess.cli.report", "_adjudication_section"),
    ("postprocess.logs.quality", "settings_differences"),
    ("postprocess.cli.report", "_quality_frames"),
    ("postprocess.inverse_scaling.settlement", "answers_table"),
    ("postprocess.render.outputs", "write_outputs"),
    ("postprocess.render.outputs", "flips_frame"),
    ("postprocess.render.outputs", "inverse_scaling_tables"),
    ("postprocess.render.outputs", "write_table"),
    ("postprocess.render.figures", "scaling_curves"),
    ("postprocess.render.figures", "cross_family_bars"),
    ("postprocess.render.trend_tables", "trend_figure"),
    ("postprocess.render.outputs", "write_explorer"),
    ("postprocess.render.explorer", "_write_data"),
    ("postprocess.render.explorer", "_answers"),
    ("postprocess.render.explorer", "_fit_images"),
    ("postprocess.render.explorer", "_run_coverage"),
    ("postprocess.render.explorer", "_page"),
    ("postprocess.render.explorer", "_index"),
    ("postprocess.render.report", "write_report"),
    ("postprocess.render.outputs", "_swap"),
    ("postprocess.render.reuse", "reuse_for"),
    ("postprocess.render.reuse", "output_files"),
    ("postprocess.render.reuse", "restore"),
    ("postprocess.render.reuse", "Reuse.stored"),
    ("postprocess.render.reuse", "Reuse.store"),
]

totals: dict[str, list[float]] = {}  # name -> [calls, cpu, imports within]
_importing = [0.0, 0]  # CPU seconds in top-level imports so far, import depth


def _timed(name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        imports_before, start = _importing[0], time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            entry = totals.setdefault(name, [0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += time.process_time() - start
            entry[2] += _importing[0] - imports_before

    return wrapper


def _watch_imports() -> None:
    bootstrap = importlib._bootstrap  # what `import` calls for a module not yet loaded
    original = bootstrap._find_and_load

    def find_and_load(name, import_):
        _importing[1] += 1
        start = time.process_time()
        try:
            return original(name, import_)
        finally:
            _importing[1] -= 1
            if _importing[1] == 0:
                _importing[0] += time.process_time() - start

    bootstrap._find_and_load = find_and_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    report_args = [a for a in args.report_args if a != "--"]
    _watch_imports()
    start = time.process_time()
    from postprocess.cli import main as cli_main

    for module_name, attribute in STAGES:
        try:  # a checkout of other code may lack a stage (perf/report_stages.py runs against any: PYTHONPATH)
            owner = importlib.import_module(module_name)
            *classes, name = attribute.split(".")  # a method: Class.method
            for class_name in classes:
                owner = getattr(owner, class_name)
            function = getattr(owner, name)
        except (ImportError, AttributeError):
            continue
        setattr(owner, name, _timed(f"{module_name.rsplit('.', 1)[-1]}.{attribute}", function))
    setup = time.process_time() - start
    run_start, imports_before = time.process_time(), _importing[0]
    code = cli_main(["report", *report_args])
    run = time.process_time() - run_start
    total = time.process_time()
    print(f"{'stage':<45} {'calls':>5} {'CPU s':>7} {'of it imports':>13}")
    print(f"{'startup (interpreter)':<45} {'':>5} {STARTUP:7.2f}")
    print(f"{'imports before the run':<45} {'':>5} {setup:7.2f}")
    for name, (calls, cpu, imported) in totals.items():
        print(f"{name:<45} {calls:5d} {cpu:7.2f} {imported:13.2f}")
    print(f"{'the command (run_report)':<45} {1:5d} {run:7.2f} {_importing[0] - imports_before:13.2f}")
    print(f"{'process total':<45} {'':>5} {total:7.2f} {_importing[0]:13.2f}")
    sys.exit(code)


if __name__ == "__main__":
    main()
