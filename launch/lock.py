"""One launcher per run folder: a lock file beside the run's outputs, safe on shared file systems.

`python -m launch run` holds RUN_DIR/launch.lock while it checks, cleans and runs a row, so two launchers
(two terminals, a resubmitted Slurm array next to the old one) never write the same run. The lock file is
JSON naming its holder: pid, host, start time and command line.

Taking it: the holder's record is written to a private file and hard-linked to launch.lock; link() fails
when the name exists and is atomic on local disks and NFS alike (O_EXCL is not on old NFS), so exactly
one launcher wins. A lock left by a process that is gone is taken over only on the host that wrote it
(a pid means nothing elsewhere), under a flock on a file in the host's temp folder so two launchers
there cannot both take it; a pid reused by an unrelated live process keeps the lock held (delete it);
a lock from another host is reported with the hint to delete it once its process has stopped.
Releasing removes the file only while it still holds this launcher's record.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "launch.lock"


class LockHeld(RuntimeError):
    """Another launcher holds the lock; the message names it (pid, host, start time, command)."""


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    started: str
    command: str

    @classmethod
    def me(cls) -> Holder:
        return cls(os.getpid(), socket.gethostname(), time.strftime("%Y-%m-%d %H:%M:%S %z"),
                   shlex.join(sys.orig_argv))  # the command line as typed (`python -m launch run ...`)

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}, started {self.started}, command: {self.command}"

    def alive(self) -> bool:
        """Whether the process runs (meaningful on its own host only)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's live process
            return True
        return True


def read_holder(lock: Path) -> Holder | None:
    """The holder a lock file names; None when the file is gone. An unreadable record is a Holder with
    pid 0 (never taken over: it is not known to be dead)."""
    try:
        text = lock.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        return Holder(int(data["pid"]), str(data["host"]), str(data["started"]), str(data["command"]))
    except (ValueError, KeyError, TypeError):
        return Holder(0, "?", "?", f"(unreadable lock record: {text[:200]!r})")


class RunLock:
    """`with RunLock(run_dir) as lock:` holds run_dir/launch.lock; LockHeld when another launcher has it.
    `lock.notice` says when a stale lock was taken over."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self.holder = Holder.me()
        self.notice: str | None = None

    def _record(self) -> str:
        return json.dumps(self.holder.__dict__)

    def _try_link(self) -> bool:
        private = self.path.with_name(f"{LOCK_NAME}.{self.holder.host}.{self.holder.pid}")
        private.write_text(self._record(), encoding="utf-8")
        try:
            os.link(private, self.path)
            return True
        except FileExistsError:
            return False
        finally:
            private.unlink()

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._try_link():
            return
        holder = read_holder(self.path)
        if holder is None and self._try_link():  # released in between
            return
        holder = holder or read_holder(self.path)
        if holder is not None and holder.host == self.holder.host and holder.pid and not holder.alive():
            if self._take_over(holder):
                return
            holder = read_holder(self.path)
        where = "" if holder is None or holder.host == self.holder.host else (
            f" (another host: if that process has stopped, delete {self.path})")
        raise LockHeld(f"{self.path.parent} is being run by another launcher: "
                       f"{holder.describe() if holder else 'unknown holder'}{where}")

    def _take_over(self, stale: Holder) -> bool:
        """Replace a dead same-host holder's lock, under a host-local flock; False if someone else was faster."""
        # host-local guard (only same-host launchers ever take a lock over), kept off the shared run folder
        digest = hashlib.sha256(str(self.path.resolve()).encode()).hexdigest()[:16]
        guard = Path(tempfile.gettempdir()) / f"invscale-launch-takeover-{digest}"
        with open(guard, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            if read_holder(self.path) != stale:
                return False
            temporary = self.path.with_name(f"{LOCK_NAME}.{self.holder.host}.{self.holder.pid}.new")
            temporary.write_text(self._record(), encoding="utf-8")
            os.replace(temporary, self.path)
        self.notice = f"took over a stale lock of a process that is gone ({stale.describe()})"
        return True

    def release(self) -> None:
        if read_holder(self.path) == self.holder:
            self.path.unlink()

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
