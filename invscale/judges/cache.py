"""The completed calls of one judge, on disk, so that a rerun makes no call twice and a killed run resumes.

`<cache_dir>/<judge name>.jsonl`: one JSON object a line (key, judge, provider, model, answer,
finish_reason, attempts, the system prompt, the prompt, the images' hashes, the sample number, when),
flushed and fsynced per call. A line cut short by a kill is ignored (that call is made again).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path


class JudgeCache:
    """The completed calls of one judge: an append-only JSONL, each line fsynced as it is written."""

    def __init__(self, path: Path):
        self.path = path
        self.answers: dict[str, dict] = {}
        self.ignored_lines = 0
        self._lock = threading.Lock()
        self._needs_newline = False
        if path.exists():
            text = path.read_text(encoding="utf-8")
            self._needs_newline = bool(text) and not text.endswith("\n")
            for line in text.splitlines():
                try:
                    record = json.loads(line)
                    self.answers[record["key"]] = record
                except (ValueError, KeyError, TypeError):
                    self.ignored_lines += 1  # a line cut short by a killed run: that call is made again

    def __contains__(self, key: str) -> bool:
        return key in self.answers

    def put(self, record: dict) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(("\n" if self._needs_newline else "") + line)
                handle.flush()
                os.fsync(handle.fileno())
            self._needs_newline = False
            self.answers[record["key"]] = record
