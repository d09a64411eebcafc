"""Parquet cache of ingested logs, so that re-running the analysis does not re-read the JSONL.

`load_or_ingest(dirs, cache_dir, registry, ...)` returns the IngestResult stored under
`cache_dir/ingest-<fingerprint>/` (table.parquet, runs.parquet, problems.parquet, meta.json) when one
exists, else ingests and stores it. The fingerprint is a SHA-256 over:
- every `*_results.json` and `*_samples_*.jsonl` under `dirs`: resolved path, size, mtime (ns);
- the registry after overrides (models, families, override map) and the `strict` flag;
- the source of postprocess/logs/ingest.py and runs.py, lmms_eval_tasks/record.py and
  model_configs/registry.py (the ingestion, validation and model-matching rules).
Any change to these makes a new entry; old entries are left in place (delete the folder to reclaim
space). Entries are written to a temporary folder and renamed into place, so a killed run never
leaves a half-written entry behind. Cached frames keep their dtypes (categoricals, nullable booleans).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

import lmms_eval_tasks.record
import model_configs.registry
from model_configs import Registry
from postprocess.logs import ingest, runs

_FRAMES = ("table", "runs", "problems", "run_tasks")


def input_fingerprint(dirs: Iterable[Path | str], registry: Registry, model_overrides: dict[str, str] | None = None,
                      strict: bool = True) -> str:
    """SHA-256 of the log files' identities, the effective registry, `strict` and the ingestion code."""
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    digest = hashlib.sha256()
    files = set()
    for root in map(Path, dirs):
        if not root.is_dir():
            raise FileNotFoundError(f"log folder {root} does not exist")
        for pattern in (f"*{runs.RESULTS_SUFFIX}", f"*{runs.SAMPLES_MARKER}*.jsonl"):
            files.update(p.resolve() for p in root.rglob(pattern) if p.is_file())
    for path in sorted(files):
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    digest.update(registry.fingerprint().encode())
    digest.update(f"strict={strict}".encode())
    for module in (ingest, runs, lmms_eval_tasks.record, model_configs.registry):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def _entry(cache_dir: Path, fingerprint: str) -> Path:
    return Path(cache_dir) / f"ingest-{fingerprint[:24]}"


def _read_entry(entry: Path) -> ingest.IngestResult:
    meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    frames = {name: pd.read_parquet(entry / f"{name}.parquet") for name in _FRAMES}
    return ingest.IngestResult(**frames, counts=meta["counts"], from_cache=True)


def _write_entry(entry: Path, result: ingest.IngestResult, fingerprint: str, dirs: list[str]) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=entry.parent))
    try:
        for name in _FRAMES:
            getattr(result, name).to_parquet(staging / f"{name}.parquet", index=False)
        meta = {"fingerprint": fingerprint, "dirs": dirs, "counts": result.counts}
        (staging / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        try:
            os.rename(staging, entry)
        except OSError:
            if not (entry / "meta.json").exists():  # not a concurrent writer of the same entry: a real error
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_or_ingest(dirs: Iterable[Path | str], cache_dir: Path | str, registry: Registry,
                   model_overrides: dict[str, str] | None = None, strict: bool = True, progress: bool = False,
                   workers: int | None = None, refresh: bool = False) -> ingest.IngestResult:
    """The cached IngestResult for these inputs, or a fresh `ingest_logs` run stored in the cache.
    `refresh` re-ingests and overwrites the entry; `from_cache` on the result says which happened."""
    dirs = [str(Path(d).resolve()) for d in dirs]
    fingerprint = input_fingerprint(dirs, registry, model_overrides, strict)
    entry = _entry(Path(cache_dir), fingerprint)
    if refresh:
        shutil.rmtree(entry, ignore_errors=True)
    elif (entry / "meta.json").exists():
        return _read_entry(entry)
    result = ingest.ingest_logs(dirs, registry, model_overrides=model_overrides, progress=progress, strict=strict,
                                workers=workers)
    _write_entry(entry, result, fingerprint, dirs)
    return result


__all__ = ["input_fingerprint", "load_or_ingest"]
