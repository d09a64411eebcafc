"""Without a network, question loading asks the hub once, then reads only the local cache, and the command says
once which questions are missing and how to give them (postprocess/logs/questions.py, issue 28 item 4).

The "hub" is a loopback server that counts the connections it gets and closes each without an answer, as a
network that cannot reach the hub does (huggingface_hub retries such a request five times, about 23 s). Each
command runs in a fresh process with HF_ENDPOINT pointing at it and without HF_HUB_OFFLINE: huggingface_hub and
datasets read both when they are imported.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from explorer_factory import fixture_questions, write_chance_logs

REPO = Path(__file__).resolve().parents[2]
HUB_SPLITS = [("MME", "test"), ("MMMU", "test"), ("MathVista", "testmini")]  # datasets read from the hub


class RefusingHub:
    """A TCP server on loopback that reads each request and closes its connection without an answer, counting them."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.requests: list[str] = []  # the request line each connection sent
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            self.requests.append(connection.recv(65536).split(b"\r\n", 1)[0].decode())  # left unanswered
            connection.close()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}"


def dataset_requests(hub: RefusingHub) -> list[str]:
    """The distinct requests about datasets, each once however many connections it took (at most two), in order.
    huggingface_hub's own look-up of agent harnesses for its user agent, made once with the first request, is not
    one of them."""
    about = [request for request in hub.requests if " /datasets/" in request]
    assert all(about.count(request) <= 2 for request in about)
    return list(dict.fromkeys(about))


@pytest.fixture
def hub():
    server = RefusingHub()
    yield server
    server.server.close()


def without_network(hub: RefusingHub, home: Path, offline: bool = False) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}
    environment.update({"HF_ENDPOINT": hub.endpoint, "HF_HOME": str(home),  # an empty cache
                        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests" / "support")])})
    if offline:
        environment["HF_HUB_OFFLINE"] = "1"
    return environment


RELOAD = """
import sys
from postprocess.logs.questions import QuestionSourceError, reload_questions
try:
    reload_questions([(b, s, "q1", "direct") for b, s in {splits!r}])
except QuestionSourceError as error:
    print(error)
"""


def test_the_first_failed_hub_request_ends_question_loading_and_one_message_names_every_split(hub, tmp_path):
    done = subprocess.run([sys.executable, "-c", RELOAD.format(splits=HUB_SPLITS)], cwd=tmp_path, text=True,
                          capture_output=True, env=without_network(hub, tmp_path / "hf"), timeout=120, check=True)
    # One request for three hub datasets, not retried: the card of the first (httpcore opens a second connection
    # when the first closes unanswered, within the one request; huggingface_hub's retries would add 5 more, each
    # after a pause, and the other datasets theirs).
    assert dataset_requests(hub) == ["HEAD /datasets/lmms-lab-encoder/MME/resolve/main/README.md HTTP/1.1"]
    assert "Retrying" not in done.stderr and "thrown while requesting" not in done.stderr
    [message] = done.stdout.splitlines()
    assert message.startswith("3 questions and their images cannot be loaded (MME test 1, MMMU test 1, MathVista "
                              "testmini 1): the Hugging Face hub cannot be reached (")
    assert "only the local cache was read" in message
    assert "--tasks-dir DIR" in message
    assert "--data invscale_mme_test=PATH --data invscale_mmmu_test=PATH --data invscale_mathvista_testmini=PATH" in message


def test_with_hf_hub_offline_no_request_is_made(hub, tmp_path):
    done = subprocess.run([sys.executable, "-c", RELOAD.format(splits=HUB_SPLITS)], cwd=tmp_path, text=True,
                          capture_output=True, env=without_network(hub, tmp_path / "hf", offline=True), timeout=120,
                          check=True)
    assert hub.connections == 0
    assert "HF_HUB_OFFLINE is set and they are not in the local Hugging Face cache" in done.stdout


@pytest.fixture(scope="module")
def chance_logs(tmp_path_factory, fixture_tasks):
    folder = tmp_path_factory.mktemp("chance") / "logs"
    return folder, write_chance_logs(folder, fixture_questions(fixture_tasks))


def test_report_without_network_asks_the_hub_once_and_says_once_what_the_explorer_lacks(hub, tmp_path,
                                                                                          chance_logs):
    logs, registry = chance_logs
    done = subprocess.run([sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--out",
                           str(tmp_path / "out"), "--extra-models", str(registry), "--min-n", "4", "--min-net", "2"],
                          cwd=tmp_path, text=True, capture_output=True, env=without_network(hub, tmp_path / "hf"),
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert len(dataset_requests(hub)) == 1  # one request (as above)
    assert "Retrying" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if "cannot be loaded" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: the explorer shows the flipped questions of these splits without their "
                                  "text and images")
    assert "the Hugging Face hub cannot be reached" in warnings[0] and "--tasks-dir DIR" in warnings[0]
    page = next((tmp_path / "out" / "explorer" / "pages").glob("*.html")).read_text(encoding="utf-8")
    assert "the hub cannot be reached" in page  # each page still says why its questions are missing


def test_the_quick_start_says_where_the_questions_come_from_without_a_network():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "--tasks-dir" in quick_start.split("- **Unsettled answers", 1)[0]  # beside the first command
    assert "HF_HUB_OFFLINE" in quick_start
