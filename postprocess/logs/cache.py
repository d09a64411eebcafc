"""Parquet cache of ingested logs, so that re-running the analysis does not re-read the JSONL.

`load_or_ingest(dirs, cache_dir, registry, ...)` returns the IngestResult stored under
`cache_dir/ingest-<key>/` (one Parquet file per IngestResult frame and meta.json) when a sound one
exists, else ingests and stores it.

The key is a SHA-256 over:
- every `*_results.json` and `*_samples_*.jsonl` under `dirs`: resolved path and a hash of its bytes
  (xxh3-128, ~20 GB/s), so an edited log is a new key whatever its size and times;
- the registry after overrides (models, families, override map), `strict` and the `duplicates` rule;
- the source of the ingestion code (postprocess/logs/ingest.py, lines.py, runs.py,
  lmms_eval_tasks/record.py, model_configs/registry.py).

Hashes are remembered in `cache_dir/file_hashes.json` to skip re-reading unchanged files. A remembered
hash is used only when the file's device, inode, size, mtime and ctime are all those recorded, and the
recorded ctime is over 2 s older than the moment its hashing began. Any write to a file, and any change
of its times (`touch`, `touch -d` included), sets its ctime to the current time, which no user can set
back; so a file changed after it was hashed no longer matches, and one changed shortly before (inside a
coarse timestamp's tick) is not remembered (it is hashed again next time, as git does with racy files).

An entry checks itself when read: meta.json must parse and name this key, and each frame file must
have the size and hash meta.json records and read back with the expected columns. A damaged entry
(deleted meta.json, truncated or edited Parquet, unreadable frame) is rebuilt with a one-line notice;
`refresh=True` rebuilds it regardless. Entries are written to a temporary folder and renamed into
place, so a killed run never leaves a half-written entry behind; if the cache cannot be written the
result is returned uncached with a notice. Old entries are left in place (delete the folder to reclaim
space). Cached frames keep their dtypes (categoricals, nullable booleans).

Imported files (postprocess/logs/imports/) are cached the same way by `load_or_import`, in entries
`import-<key>`: the key covers each file's path, contents and import options, the registry, `strict` and the
source of the importer and of the scoring core it scores with (extraction, scoring, question, record).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow as pa
import xxhash

import lmms_eval_tasks.record
import model_configs.registry
from model_configs import Registry
from postprocess.logs import imports, ingest, lines, runs

HASHES_FILE = "file_hashes.json"
RACY_MARGIN_NS = 2_000_000_000  # coarser than any file system's timestamp tick (FAT: 2 s)
_CHUNK = 1 << 22
_CODE = (ingest, lines, runs, lmms_eval_tasks.record, model_configs.registry)


def _import_code() -> tuple:
    """The modules whose code an import's fingerprint covers: the importers (every module of their folder), ingestion
    and the scoring core, imported only when a file is imported (a report of logs alone needs none of the rules)."""
    import lmms_eval_tasks.extraction
    import lmms_eval_tasks.question
    import lmms_eval_tasks.scoring

    return (imports, ingest, lines, lmms_eval_tasks.extraction, lmms_eval_tasks.question, lmms_eval_tasks.record,
            lmms_eval_tasks.scoring, model_configs.registry)


class DamagedEntry(Exception):
    """A cache entry that does not read back as written; the message says what is wrong."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


# ---------------------------------------------------------------------------------------------- file hashes
def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def content_hash(path: Path) -> str:
    """xxh3-128 of the file's bytes."""
    digest = xxhash.xxh3_128()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class FileHashes:
    """Content hashes of files, remembered across runs under the rule in the module docstring."""

    def __init__(self, memo_path: Path | None, notice: Callable[[str], None] = _stderr) -> None:
        self.memo_path = memo_path
        self.memo: dict[str, list] = {}
        self.changed = False
        if memo_path is not None and memo_path.exists():
            try:
                memo = json.loads(memo_path.read_text(encoding="utf-8"))
                if not isinstance(memo, dict) or not all(isinstance(v, list) and len(v) == 6 for v in memo.values()):
                    raise ValueError("not a mapping of file -> [device, inode, size, mtime, ctime, hash]")
                self.memo = memo
            except (OSError, ValueError) as error:
                notice(f"cache: {memo_path} is damaged ({error}); hashing every log file again")
                self.changed = True

    def __call__(self, path: Path) -> str:
        key = str(path)
        before = os.stat(path)
        remembered = self.memo.get(key)
        if remembered is not None and remembered[:5] == _identity(before):
            return remembered[5]
        hashed_at = time.time_ns()
        digest = content_hash(path)
        after = os.stat(path)
        if _identity(after) == _identity(before) and after.st_ctime_ns < hashed_at - RACY_MARGIN_NS:
            self.memo[key] = [*_identity(after), digest]
        else:
            self.memo.pop(key, None)
        self.changed = True
        return digest

    def save(self) -> None:
        """Write the remembered hashes (of files that still exist) when they changed."""
        if self.memo_path is None or not self.changed:
            return
        memo = {path: record for path, record in self.memo.items() if os.path.exists(path)}
        _atomic_write_text(self.memo_path, json.dumps(memo))
        self.changed = False


def _atomic_write_text(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------------------------- key
def log_files(dirs: Iterable[Path | str]) -> list[Path]:
    """Every results.json and samples file under `dirs`, resolved and sorted."""
    files = set()
    for root in map(Path, dirs):
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(f"--logs {root} is a file, not a folder")
        if not root.is_dir():
            raise FileNotFoundError(f"log folder {root} does not exist")
        for pattern in (f"*{runs.RESULTS_SUFFIX}", f"*{runs.SAMPLES_MARKER}*.jsonl"):
            files.update(p.resolve() for p in root.rglob(pattern) if p.is_file())
    return sorted(files)


def input_fingerprint(dirs: Iterable[Path | str], registry: Registry, model_overrides: dict[str, str] | None = None,
                      strict: bool = True, duplicates: str = "newest", hashes: Callable[[Path], str] = content_hash
                      ) -> str:
    """SHA-256 of the log files' paths and contents, the effective registry, the options and the ingestion
    code. `hashes` gives a file's content hash (a FileHashes remembers them)."""
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    digest = hashlib.sha256()
    for path in log_files(dirs):
        digest.update(f"{path}\0{hashes(path)}\n".encode("utf-8", "surrogateescape"))
    digest.update(registry.fingerprint().encode())
    digest.update(f"strict={strict}\0duplicates={duplicates}".encode())
    for code in _code_files(_CODE):
        digest.update(code.read_bytes())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------- entries
def import_fingerprint(sources: list[imports.ImportSource], registry: Registry,
                       model_overrides: dict[str, str] | None = None, strict: bool = True,
                       hashes: Callable[[Path], str] = content_hash) -> str:
    """SHA-256 of the imported files' paths, contents and options, the effective registry, `strict` and the
    importer's and scoring core's code."""
    if model_overrides:
        registry = registry.with_overrides(model_overrides)
    digest = hashlib.sha256()
    for source in sources:
        path = Path(source.path).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"{source.path}: no such file")
        digest.update(f"{path}\0{hashes(path)}\0{source.harness}\0{source.dataset}\0{source.subtask_column}\n"
                      .encode("utf-8", "surrogateescape"))
    digest.update(registry.fingerprint().encode())
    digest.update(f"strict={strict}".encode())
    for code in _code_files(_import_code()):
        digest.update(code.read_bytes())
    return digest.hexdigest()


def _code_files(modules) -> list[Path]:
    """The source files of the modules; a package counts with every module in its folder (a rule changed in
    lmms_eval_tasks/extraction/guards.py must change the fingerprint too)."""
    files = []
    for module in modules:
        path = Path(module.__file__)
        files += sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
    return files


def _entry(cache_dir: Path, fingerprint: str, kind: str = "ingest") -> Path:
    return Path(cache_dir) / f"{kind}-{fingerprint[:24]}"


def _read_frame(path: Path) -> pd.DataFrame:
    """A cached frame with its dtypes: pandas 2 (Python 3.10) reads the "str" columns back as object."""
    import pyarrow.parquet

    frame = pd.read_parquet(path, pre_buffer=False)  # read ahead, a column's row groups are held compressed besides
    columns = json.loads(pyarrow.parquet.read_schema(path).metadata[b"pandas"])["columns"]
    text = [c["name"] for c in columns if c["numpy_type"] == "str" and frame[c["name"]].dtype == object]
    return _text_in_one_chunk(frame.astype({name: ingest.TEXT for name in text}) if text else frame)


def _text_in_one_chunk(frame: pd.DataFrame) -> pd.DataFrame:
    """Each Arrow-backed text column in one chunk, as ingestion leaves them (lines.joined_rows): read back, a column
    has a chunk per row group, and every take from it would copy the whole column first."""
    for name in list(frame.columns):
        dtype = frame[name].dtype
        if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
            continue
        column = frame[name].array.__arrow_array__()
        if column.num_chunks < 2 or not pa.types.is_large_string(column.type):
            continue
        chunks = column.chunks
        position = frame.columns.get_loc(name)
        del column
        frame.pop(name)  # `chunks` holds the only reference: each is released as it is copied
        frame.insert(position, name, pd.array(lines.joined_text(chunks), dtype=dtype))
    return frame


def _expected_columns() -> dict[str, list[str]]:
    return {"table": ingest.TABLE_COLUMNS, "runs": ingest.RUNS_COLUMNS, "problems": ingest.PROBLEM_COLUMNS,
            "run_tasks": ingest.RUN_TASK_COLUMNS, "settings": ingest.SETTINGS_COLUMNS,
            "duplicate_runs": ingest.DUPLICATE_RUN_COLUMNS}


def _read_entry(entry: Path, fingerprint: str) -> ingest.IngestResult:
    """The stored result; DamagedEntry when anything does not read back as written."""
    try:
        meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DamagedEntry("meta.json is missing") from None
    except (OSError, ValueError) as error:
        raise DamagedEntry(f"meta.json is unreadable: {error}") from None
    if not isinstance(meta, dict) or meta.get("fingerprint") != fingerprint or not isinstance(meta.get("counts"), dict):
        raise DamagedEntry("meta.json does not describe this entry")
    frames = {}
    for name, columns in _expected_columns().items():
        path = entry / f"{name}.parquet"
        recorded = (meta.get("frames") or {}).get(name)
        try:
            if recorded != [path.stat().st_size, content_hash(path)]:
                raise DamagedEntry(f"{path.name} is not the file that was written (size or content changed)")
            frame = _read_frame(path)
        except OSError as error:
            raise DamagedEntry(f"{path.name} is unreadable: {error}") from None
        except (ValueError, TypeError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise DamagedEntry(f"{path.name} is unreadable: {error}") from None
        if list(frame.columns) != columns:
            raise DamagedEntry(f"{path.name} has columns {list(frame.columns)}, expected {columns}")
        frames[name] = frame
    return ingest.IngestResult(**frames, counts=meta["counts"], from_cache=True, fingerprint=fingerprint)


# Parquet row groups of a cache entry of about this many bytes in memory: the writer holds a whole row group encoded
# before it writes it, so one group of all rows held a second copy of every response (perf/bench_report_memory.py),
# while thousands of small groups make every warm run's read three to four times slower (perf/bench_report.py).
ROW_GROUP_BYTES = 32 * 2**20
ROW_GROUP_ROWS = (4096, 262_144)  # the least and most rows of a group


def _row_group_rows(frame: pd.DataFrame) -> int:
    """Rows per row group: ROW_GROUP_BYTES at the frame's mean row size, within ROW_GROUP_ROWS."""
    row_bytes = frame.memory_usage(deep=True, index=False).sum() / max(len(frame), 1)
    return int(min(max(ROW_GROUP_BYTES // max(row_bytes, 1), ROW_GROUP_ROWS[0]), ROW_GROUP_ROWS[1]))


def _write_entry(entry: Path, result: ingest.IngestResult, fingerprint: str, dirs: list[str]) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=entry.parent))
    try:
        recorded = {}
        for name in ingest.FRAMES:
            path = staging / f"{name}.parquet"
            frame = getattr(result, name)
            frame.to_parquet(path, index=False, row_group_size=_row_group_rows(frame))
            recorded[name] = [path.stat().st_size, content_hash(path)]
        meta = {"fingerprint": fingerprint, "dirs": dirs, "counts": result.counts, "frames": recorded}
        (staging / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        try:
            os.rename(staging, entry)
        except OSError:
            try:  # a concurrent writer of the same inputs got there first: keep its sound entry
                _read_entry(entry, fingerprint)
            except DamagedEntry:
                raise OSError(f"cannot replace cache entry {entry}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_or_ingest(dirs: Iterable[Path | str], cache_dir: Path | str, registry: Registry,
                   model_overrides: dict[str, str] | None = None, strict: bool = True, progress: bool = False,
                   workers: int | None = None, refresh: bool = False, duplicates: str = "newest",
                   notice: Callable[[str], None] = _stderr) -> ingest.IngestResult:
    """The cached IngestResult for these inputs, or a fresh `ingest_logs` run stored in the cache.
    `refresh` re-ingests and overwrites the entry; `from_cache` on the result says which happened;
    `notice` receives the one-line notices (damaged entries, a cache that cannot be written)."""
    dirs = [str(Path(d).resolve()) for d in dirs]
    return _cached(cache_dir, "ingest", lambda hashes: input_fingerprint(dirs, registry, model_overrides, strict,
                                                                         duplicates, hashes),
                   lambda: ingest.ingest_logs(dirs, registry, model_overrides=model_overrides, progress=progress,
                                              strict=strict, workers=workers, duplicates=duplicates),
                   dirs, refresh, notice)


def load_or_import(sources: list[imports.ImportSource], cache_dir: Path | str, registry: Registry,
                   model_overrides: dict[str, str] | None = None, strict: bool = True, refresh: bool = False,
                   notice: Callable[[str], None] = _stderr) -> ingest.IngestResult:
    """The cached imports.import_outputs result for these files, or a fresh import stored in the cache (the rules of
    load_or_ingest: damaged entries rebuilt, `refresh`, a cache that cannot be written)."""
    return _cached(cache_dir, "import",
                   lambda hashes: import_fingerprint(sources, registry, model_overrides, strict, hashes),
                   lambda: imports.import_outputs(sources, registry, model_overrides, strict),
                   [str(source.path) for source in sources], refresh, notice)


def _cached(cache_dir: Path | str, kind: str, fingerprint_of: Callable[[FileHashes], str],
            build: Callable[[], ingest.IngestResult], inputs: list[str], refresh: bool,
            notice: Callable[[str], None]) -> ingest.IngestResult:
    """The entry of `kind` for the inputs' fingerprint, else `build()` stored as it: a damaged entry is rebuilt,
    `refresh` rebuilds, a cache that cannot be written is said and skipped."""
    cache_dir = Path(cache_dir)
    if cache_dir.exists() and not cache_dir.is_dir():
        raise NotADirectoryError(f"--cache-dir {cache_dir} is a file, not a folder")
    hashes = FileHashes(cache_dir / HASHES_FILE, notice)
    fingerprint = fingerprint_of(hashes)
    entry = _entry(cache_dir, fingerprint, kind)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        hashes.save()
        writable = True
    except OSError as error:
        notice(f"cache: cannot write {cache_dir} ({error}); continuing without the cache")
        writable = False
    if entry.exists() and not refresh:
        try:
            return _read_entry(entry, fingerprint)
        except DamagedEntry as damage:
            notice(f"cache: {entry} is damaged ({damage}); rebuilding it")
    result = replace(build(), fingerprint=fingerprint)
    if writable:
        try:
            if entry.exists():
                shutil.rmtree(entry)
            _write_entry(entry, result, fingerprint, inputs)
        except OSError as error:
            notice(f"cache: cannot write {entry} ({error}); continuing without the cache")
    return result

__all__ = ["HASHES_FILE", "import_fingerprint", "load_or_import", "DamagedEntry", "FileHashes", "content_hash", "input_fingerprint", "load_or_ingest",
           "log_files"]
