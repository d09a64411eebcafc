"""Reuse of a report's outputs from `--cache-dir` when nothing they are made from has changed, as build systems do.

`report` with `--cache-dir` stores, after a run, what the analysis wrote (every output file but problems.csv and the
explorer's folder, the analysis itself for the explorer, and the console lines said after the outputs were in place)
in `cache_dir/report-<key>/`. The key is a SHA-256 over everything those outputs are made from:
- the ingested table's own key (postprocess/logs/cache.py: every log file's path and contents, the registry, the
  ingestion options and code; for imported files the importer's key), so a changed log is a new key;
- the judge's adjudication files beside the logs (path and contents), unless --no-judge;
- every option of the command but --cache-dir, --refresh and --progress (a changed --min-n, --unsettled, --out,
  --explorer ... is a new key), and the contents of the files and folders the options name (--reeval, --taxonomy,
  --human, --human-annotations, --annotator-profiles);
- the source of this project's packages (postprocess, lmms_eval_tasks, model_configs, invscale), the Python version
  and the versions of the libraries that compute or write the outputs (numpy, pandas, pyarrow, scipy, matplotlib,
  statsmodels).
A later run with the same key copies those files instead of computing them (the explorer, when asked for, is still
written from the stored analysis: its questions and images come from data outside the key). An entry checks itself:
every file must have the size and hash its meta.json records; one that does not (deleted, edited through a link in
an output folder) is not used, and the run computes and stores it again. `--refresh` computes regardless. The
REUSE_KEPT most recently used entries are kept, older ones removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from postprocess.logs.cache import content_hash

VERSION = "report-reuse-1"
REUSE_KEPT = 4
NOT_KEYED = ("handler", "cache_dir", "refresh", "progress")  # options that change no output
NAMED_INPUTS = ("reeval", "taxonomy", "human", "human_annotations", "annotator_profiles")  # options naming files
PACKAGES = ("postprocess", "lmms_eval_tasks", "model_configs", "invscale")
LIBRARIES = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib", "statsmodels")
ANALYSIS_FILE = "analysis.pickle"


def _files_under(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.is_file() else []


def _named_paths(args) -> list[Path]:
    paths = []
    for name in NAMED_INPUTS:
        value = getattr(args, name, None)
        for item in value if isinstance(value, list) else [value]:
            for part in item if isinstance(item, (list, tuple)) else [item]:
                if part is not None:
                    paths.append(Path(part))
    return paths


def _code_digest() -> str:
    """The source of this project's packages: a changed rule, table or page is a new key."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(f"{path.relative_to(root)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _versions() -> str:
    found = []
    for name in LIBRARIES:
        try:
            found.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name}=absent")
    return f"{sys.version}\0" + "\0".join(found)


def report_key(args, fingerprint: str | None, adjudication_files: list[Path]) -> str | None:
    """The key of this run's outputs (module docstring); None when the table has no key of its own (read without
    --cache-dir)."""
    if fingerprint is None:
        return None
    digest = hashlib.sha256(f"{VERSION}\0{fingerprint}\0".encode())
    options = {name: value for name, value in sorted(vars(args).items()) if name not in NOT_KEYED}
    options["out"] = str(Path(args.out).resolve())
    digest.update(json.dumps(options, default=str, sort_keys=True).encode())
    for path in [*_named_paths(args), *([] if getattr(args, "no_judge", False) else adjudication_files)]:
        for found in _files_under(path):
            digest.update(f"\0{found.resolve()}\0{content_hash(found)}".encode("utf-8", "surrogateescape"))
    digest.update(_code_digest().encode())
    digest.update(_versions().encode())
    return digest.hexdigest()


@dataclass
class Stored:
    """A sound entry: its folder, the files it holds (relative paths), the console lines to say again and the
    analysis (None when the run had no explorer)."""

    entry: Path
    files: list[str]
    console: list[tuple[str, str]]
    analysis: object = None


def say(lines: list[tuple[str, str]]) -> None:
    """Print each (stream, text) line on stdout or stderr."""
    for stream, text in lines:
        print(text, file=sys.stderr if stream == "stderr" else sys.stdout)


@dataclass
class Reuse:
    """The reuse of one run: its entry folder under the cache and its key."""

    entry: Path
    key: str

    def stored(self, with_analysis: bool) -> Stored | None:
        """The entry, when it is sound (every file as recorded, the analysis readable where asked for); else None."""
        try:
            meta = json.loads((self.entry / "meta.json").read_text(encoding="utf-8"))
            if meta.get("key") != self.key:
                return None
            for name, (size, digest) in meta["files"].items():
                path = self.entry / "files" / name
                if path.stat().st_size != size or content_hash(path) != digest:
                    return None
            analysis = None
            if with_analysis:
                with open(self.entry / ANALYSIS_FILE, "rb") as handle:
                    analysis = pickle.load(handle)
        except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError, AttributeError,
                ImportError):
            return None
        os.utime(self.entry)  # recently used: kept (REUSE_KEPT)
        return Stored(self.entry, list(meta["files"]), [tuple(line) for line in meta["console"]], analysis)

    def store(self, staging: Path, files: list[str], analysis, console: list[tuple[str, str]]) -> None:
        """Keep `files` (relative to `staging`, the run's outputs), the analysis and the console lines said after
        the outputs are in place ((stream, text)) under the entry; a cache that cannot be written is said and
        skipped."""
        parent = self.entry.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=f".{self.entry.name}-", dir=parent))
        except OSError as error:
            print(f"cache: cannot write {parent} ({error}); the report's outputs are not kept", file=sys.stderr)
            return
        try:
            recorded = {}
            for name in files:
                target = work / "files" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                _link_or_copy(staging / name, target)
                recorded[name] = [target.stat().st_size, content_hash(target)]
            with open(work / ANALYSIS_FILE, "wb") as handle:
                pickle.dump(replace(analysis, source=None, scored=None), handle, protocol=pickle.HIGHEST_PROTOCOL)
            meta = {"key": self.key, "files": recorded, "console": console}
            (work / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
            if self.entry.exists():
                shutil.rmtree(self.entry)
            os.rename(work, self.entry)
        except OSError as error:
            print(f"cache: cannot write {self.entry} ({error}); the report's outputs are not kept", file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _prune(parent)


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link where the file system allows (the entry checks its files' hashes before they are used), else a
    copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def restore(stored: Stored, staging: Path) -> None:
    """The entry's files into the run's staging folder."""
    for name in stored.files:
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(stored.entry / "files" / name, target)


def _prune(parent: Path) -> None:
    entries = sorted((p for p in parent.glob("report-*") if p.is_dir()), key=lambda p: p.stat().st_mtime,
                     reverse=True)
    for old in entries[REUSE_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)


def reuse_for(args, fingerprint: str | None, adjudication_files: list[Path]) -> Reuse | None:
    """The run's Reuse (with --cache-dir and a keyed table), else None."""
    if not getattr(args, "cache_dir", None):
        return None
    key = report_key(args, fingerprint, adjudication_files)
    return None if key is None else Reuse(Path(args.cache_dir) / f"report-{key[:24]}", key)


def output_files(staging: Path, leave_out: tuple[str, ...]) -> list[str]:
    """The files under `staging` (relative, '/'-separated) but those under the names in `leave_out`."""
    found = []
    for path in sorted(staging.rglob("*")):
        name = path.relative_to(staging).as_posix()
        if path.is_file() and name.split("/", 1)[0] not in leave_out:
            found.append(name)
    return found
