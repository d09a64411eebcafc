"""A real Label Studio server for the tests: started on loopback with SQLite in a temporary folder, from
the virtual environment scripts/setup_label_studio.sh builds (.venv-ls, or LABEL_STUDIO_VENV).

The first user and its token are made at start; `--enable-legacy-api-token` lets that token and the
annotators' work (Label Studio 1.23 disables legacy tokens for new organizations otherwise). The
annotators are made through Label Studio's own Django models (users, organization membership, token),
in its environment, against the same SQLite database. Version checks, analytics and error reporting
are switched off, so the server makes no outside calls.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 300  # first start migrates a fresh SQLite database: ~40 s on an idle 2-core machine
QUIET = {"LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false", "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": ""}

MAKE_ANNOTATORS = """
import json, os, sys
import label_studio
sys.path.insert(0, os.path.dirname(label_studio.__file__))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "core.settings.label_studio")
import django
django.setup()
from organizations.models import Organization
from rest_framework.authtoken.models import Token
from users.models import User
organization = Organization.objects.get()
tokens = {}
for email in json.loads(sys.argv[1]):
    user = User.objects.create_user(email=email, username=email, password=os.urandom(16).hex())
    organization.add_user(user)
    user.active_organization = organization
    user.save()
    tokens[email] = Token.objects.get_or_create(user=user)[0].key
print("TOKENS " + json.dumps(tokens))
"""


class LabelStudioUnavailable(RuntimeError):
    """The server could not be started; the message says why."""


@dataclass
class LabelStudioServer:
    url: str
    admin_email: str
    admin_token: str
    annotator_tokens: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None
    log: Path | None = None

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # its own session: the server and its children
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def venv() -> Path:
    return Path(os.environ.get("LABEL_STUDIO_VENV") or REPO / ".venv-ls")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tail(path: Path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"


def start(data_dir: Path, annotators: list[str]) -> LabelStudioServer:
    """Start the server, wait until /health answers, make the annotators; raise LabelStudioUnavailable."""
    import httpx

    executable = venv() / "bin" / "label-studio"
    if not executable.exists():
        raise LabelStudioUnavailable(f"{executable} does not exist: run scripts/setup_label_studio.sh")
    data_dir.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, **QUIET, "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir)}
    port = _free_port()
    server = LabelStudioServer(url=f"http://127.0.0.1:{port}", admin_email="owner@example.com",
                               admin_token=secrets.token_hex(20), log=data_dir / "server.log")
    with server.log.open("w") as log:
        server.process = subprocess.Popen(
            [str(executable), "start", "--no-browser", "--host", "127.0.0.1", "--port", str(port),
             "--username", server.admin_email, "--password", secrets.token_hex(12), "--user-token", server.admin_token,
             "--enable-legacy-api-token"],
            env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if server.process.poll() is not None:
            raise LabelStudioUnavailable(f"label-studio start exited with {server.process.returncode}:\n"
                                         f"{_tail(server.log)}")
        try:
            if httpx.get(f"{server.url}/health", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise LabelStudioUnavailable(f"{server.url}/health did not answer within {START_TIMEOUT_S} s:\n"
                                         f"{_tail(server.log)}")
        time.sleep(1)
    made = subprocess.run([str(venv() / "bin" / "python"), "-c", MAKE_ANNOTATORS, json.dumps(annotators)],
                          env=environment, capture_output=True, text=True, timeout=300)
    lines = [line for line in made.stdout.splitlines() if line.startswith("TOKENS ")]
    if made.returncode or not lines:
        server.stop()
        raise LabelStudioUnavailable(f"making the annotators failed ({made.returncode}):\n{made.stderr[-3000:]}")
    server.annotator_tokens = json.loads(lines[0].removeprefix("TOKENS "))
    return server
