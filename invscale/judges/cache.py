"""The completed calls of one judge, on disk, so that a rerun makes no call twice and a killed run resumes.

`<cache_dir>/<judge name>.jsonl`: one JSON object a line (key, judge, provider, model, answer,
finish_reason, attempts, the system prompt, the prompt, the images' hashes, the sample number, when),
flushed and fsynced per call. A line cut short by a kill, or holding a byte that is not UTF-8, is ignored
(that call is made again) and counted in `ignored_lines`; a cache that cannot be written (a full disk) is a
JudgeError naming the file.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from invscale.judges.config import JudgeError


class JudgeCache:
    """The completed calls of one judge: an append-only JSONL, each line fsynced as it is written."""

    def __init__(self, path: Path):
        self.path = path
        self.answers: dict[str, dict] = {}
        self.ignored_lines = 0
        self._lock = threading.Lock()
        self._needs_newline = False
        if path.exists():
            data = path.read_bytes()
            self._needs_newline = bool(data) and not data.endswith(b"\n")
            for line in data.splitlines():
                try:
                    record = json.loads(line.decode("utf-8"))
                    self.answers[record["key"]] = record
                except (ValueError, KeyError, TypeError):  # UnicodeDecodeError is a ValueError
                    self.ignored_lines += 1  # a line cut short by a killed run: that call is made again

    def __contains__(self, key: str) -> bool:
        return key in self.answers

    def put(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as handle:
                    handle.write(("\n" if self._needs_newline else "") + line)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as error:
                raise JudgeError(f"judge cache {self.path}: cannot write ({error.strerror or error})") from None
            self._needs_newline = False
            self.answers[record["key"]] = record
