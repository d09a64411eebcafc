"""The flip explorer in a real browser (Debian's headless Chromium, as test_report_browser.py): report.html links
to a case page; that page, opened from file://, renders its flips from the subtask's data file with no error: the
question, its image (loaded, from a thumbnail file) and both models' answers."""

from __future__ import annotations

import html
import re
import subprocess

import pandas as pd
from explorer_factory import fixture_questions, write_chance_logs
from headless_chromium import CHROMIUM, FLAGS, needs_chromium, open_in_chromium

from postprocess.cli import main

pytestmark = needs_chromium  # the same skip as test_report_browser.py


def dom_of(page, profile) -> str:
    """The page's DOM once its scripts ran."""
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                           "--dump-dom", page.as_uri()], check=False, capture_output=True, text=True, timeout=120).stdout


def test_a_case_link_of_the_report_opens_a_page_with_the_question_its_image_and_both_answers(tmp_path,
                                                                                          fixture_tasks):
    questions = {(q.benchmark, q.split, q.question_id): q for q in fixture_questions(fixture_tasks)}
    registry = write_chance_logs(tmp_path / "logs", list(questions.values()))
    out = tmp_path / "out"
    assert main(["report", "--logs", str(tmp_path / "logs"), "--out", str(out), "--extra-models", str(registry),
                 "--min-n", "4", "--min-net", "2", "--tasks-dir", str(fixture_tasks)]) == 0
    seen, console = open_in_chromium(out / "report.html", tmp_path / "profile")
    assert seen["errors"] == [] and console == []
    links = re.findall(r'<a class="case-link" href="(explorer/pages/[0-9a-f]+\.html)">',
                       (out / "report.html").read_text(encoding="utf-8"))
    assert links, "report.html links to no case page"

    page = out / links[0]  # the strongest case
    seen, console = open_in_chromium(page, tmp_path / "profile")
    dom = dom_of(page, tmp_path / "profile")
    assert seen["errors"] == [] and console == []
    assert any(image["complete"] and image["width"] > 0 for image in seen["images"]), seen["images"]

    cases = pd.read_csv(out / "cases.csv")
    top = cases.iloc[0]
    flips = re.findall(r'<li class="flip" data-question="([^"]+)" data-direction="(FlipInv|FlipNorm)"', dom)
    assert len(flips) == top["flip_inv"] + top["flip_norm"]
    first = questions[(top["benchmark"], top["split"], flips[0][0])]
    assert first.text.split("\n")[0][:40] in html.unescape(dom)  # the question
    assert re.search(r'<img [^>]*src="\.\./thumbs/[0-9a-f]+\.jpg"', dom)  # its image, a thumbnail file
    assert f"<strong>{top['small']}: " in dom and f"<strong>{top['large']}: " in dom  # both answers
    assert dom.count('<pre class="response">') == 2 * len(flips)
