"""The flip explorer in a real browser (Debian's headless Chromium, as tests/postprocess/test_report_browser.py): report.html
links to a case page; that page, opened from file://, renders its flips from the subtask's data file with no
error: the question, its image (loaded, from a thumbnail file) and both models' answers; a case with more flips
than a page draws at once shows every one of them, once, after scrolling or "show more", and filters over all.
A click on Table 3's first case row opens that case's page; the index sorts by a column's heading; a flip opens
its answers in the identity re-run and the reordered runs."""

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


def dom_after(page, script: str, profile) -> str:
    """The DOM of a copy of the page with `script` run after the explorer's (at load)."""
    driven = page.with_name(f"driven-{page.name}")
    driven.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", f"<script>window.addEventListener('load', () => {{ {script} }});</script></body>", 1),
        encoding="utf-8")
    return dom_of(driven, profile)


def listed_flips(dom: str) -> list[tuple[str, str]]:
    return re.findall(r'<li class="flip" data-question="([^"]+)" data-direction="(FlipInv|FlipNorm)"', dom)


def test_a_case_with_more_flips_than_the_first_render_shows_all_of_them_on_scrolling_or_clicking(
        tmp_path, monkeypatch):
    """A page draws its first FIRST_RENDER flips at once and the others when the end of the list scrolls into
    view, or on "show more" / "show all"; whichever way, every flip of the case ends up listed exactly once, the
    direction filter works over all of them, and the counts are the case's. (Random answers to 90 questions: cases
    of tens of flips, drawn 5 at a time; no question data, which the paging does not need.)"""
    import numpy as np
    from analysis_factory import random_table

    import postprocess.render.explorer as explorer
    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.inverse_scaling.cases import CASE_KEY
    from postprocess.inverse_scaling.parameters import Parameters
    from postprocess.render.outputs import write_outputs

    batch = 5
    monkeypatch.setattr(explorer, "FIRST_RENDER", batch)
    table, models = random_table(np.random.default_rng(3), 3, 90, 1)
    analysis = run_analysis(table, models, Parameters(min_n=5, min_net=1))
    (tmp_path / "no_tasks").mkdir()
    paths = write_outputs(analysis, tmp_path / "out", quality=None,
                          explorer=explorer.ExplorerInput(table, tasks_dir=tmp_path / "no_tasks"))
    cases = analysis.cases.assign(flips=analysis.cases["flip_inv"] + analysis.cases["flip_norm"])
    top = cases.sort_values("flips", ascending=False).iloc[0]
    assert top["flips"] > 2 * batch and top["flip_norm"] > batch, "the data needs a case of several batches"
    flips = analysis.flips
    mine = flips[np.logical_and.reduce([flips[c] == top[c] for c in CASE_KEY])]
    expected = sorted(zip(mine["question_id"], mine["direction"]))
    assert len(expected) == top["flips"]
    page = paths["explorer"].parent / explorer.page_name(tuple(top[c] for c in CASE_KEY))
    profile = tmp_path / "profile"

    seen, console = open_in_chromium(page, profile)
    assert seen["errors"] == [] and console == []
    first = dom_of(page, profile)
    assert len(listed_flips(first)) == batch  # the first render only, with the way to the rest
    assert re.search(rf'<p id="more" class="filter">Showing <span id="shown-count">{batch}</span> of '
                     rf'<span id="selected-count">{top["flips"]}</span>', first)
    assert f'<span id="count-FlipInv">{top["flip_inv"]}</span>' in first
    assert f'<span id="count-FlipNorm">{top["flip_norm"]}</span>' in first

    clicked = dom_after(page, "const more = document.getElementById('show-more');"
                              "(function step() { if (!document.getElementById('more').hidden) {"
                              " more.click(); setTimeout(step, 20); } })();", profile)
    # To the end of the page, again until all are drawn. Headless Chromium under a virtual time budget renders
    # few frames, and a browser dispatches scroll events in frames: the step sends the event itself.
    scrolled = dom_after(page, "(function step() { window.scrollTo(0, document.body.scrollHeight);"
                               " window.dispatchEvent(new Event('scroll'));"
                               " if (!document.getElementById('more').hidden) setTimeout(step, 20); })();", profile)
    for dom in (clicked, scrolled):
        listed = listed_flips(dom)
        assert len(listed) == len(set(listed)) and sorted(listed) == expected  # every flip, each once
        assert '<p id="more" class="filter" hidden="">' in dom
    norm = dom_after(page, "document.querySelector('button[data-direction=\"FlipNorm\"]').click();"
                           "document.getElementById('show-all').click();", profile)
    assert sorted(listed_flips(norm)) == [flip for flip in expected if flip[1] == "FlipNorm"]


def test_a_click_on_a_table_3_row_opens_its_case_page_and_the_index_sorts(tmp_path, fixture_tasks):
    """report.html's Table 3 links its first row to the strongest case's page: clicked in Chromium, the page
    that opens is that case's, its flips drawn. On the index, a click on "p" orders the cases by p, and again
    the other way."""
    registry = write_chance_logs(tmp_path / "logs", fixture_questions(fixture_tasks))
    out = tmp_path / "out"
    assert main(["report", "--logs", str(tmp_path / "logs"), "--out", str(out), "--extra-models", str(registry),
                 "--min-n", "4", "--min-net", "2", "--tasks-dir", str(fixture_tasks)]) == 0
    profile = tmp_path / "profile"
    dom = dom_after(out / "report.html", "[...document.querySelectorAll('figure.table')].find(f => f.querySelector("
                                         "'figcaption').textContent.startsWith('Table 3:'))"
                                         ".querySelector('a.case-link').click();", profile)
    top = pd.read_csv(out / "cases.csv").iloc[0]
    title = (f"{top['family']}: {top['small']} vs. {top['large']} on {top['benchmark']} {top['split']} / "
             f"{top['subtask']}")
    assert f"<title>{html.escape(title)}</title>" in dom  # the case's page, not the report
    assert len(listed_flips(dom)) == min(top["flip_inv"] + top["flip_norm"], 50)

    index = out / "explorer" / "index.html"
    p_values = pd.read_csv(out / "cases.csv")["p_value"]
    for clicks, expected in ((1, sorted(p_values)), (2, sorted(p_values, reverse=True))):
        dom = dom_after(index, "const th = document.querySelector('th[data-sort=\"p\"]');"
                               + "th.click();" * clicks, profile)
        shown = [float(p) for p in re.findall(r'<tr class="case">(?:<td>.*?</td>){10}<td>([^<]+)</td>', dom)]
        assert shown == [float(f"{p:.2g}") for p in expected]


def test_a_flip_opens_its_answers_in_the_re_run_and_the_reordered_runs(tmp_path):
    """The constructed logs' Jigsaw cases have an identity re-run and a reversed run: opening a flip's "other
    runs" shows the analysed run's answers of both models and each other run's, with no script error."""
    from analysis_factory import constructed_table, models_frame

    from postprocess.inverse_scaling.analysis import run_analysis
    from postprocess.inverse_scaling.cases import CASE_KEY
    from postprocess.inverse_scaling.parameters import Parameters
    from postprocess.render.explorer import ExplorerInput, page_name
    from postprocess.render.outputs import write_outputs

    table = constructed_table(with_controls=True, categorical=True)
    analysis = run_analysis(table, models_frame(), Parameters())
    (tmp_path / "no_tasks").mkdir()
    write_outputs(analysis, tmp_path / "out", quality=None,
                  explorer=ExplorerInput(table, tasks_dir=tmp_path / "no_tasks"))
    case = analysis.cases[analysis.cases["order_check"] != "not run"].iloc[0]
    page = tmp_path / "out" / "explorer" / page_name(tuple(case[c] for c in CASE_KEY))
    seen, console = open_in_chromium(page, tmp_path / "profile")
    assert seen["errors"] == [] and console == []
    dom = dom_after(page, "document.querySelector('details.runs').open = true;", tmp_path / "profile")
    opened = re.search(r'<details class="runs"[^>]*open=""[^>]*>(.*?)</table></details>', dom, re.DOTALL).group(1)
    assert "The same question in the other runs: identity, reverse" in opened
    assert re.findall(r'<tr(?: class="analysed"| data-run="\w+")><th>([^<]+)</th>', opened) == [
        "direct (analysed)", "identity", "reverse"]
    assert opened.count('<pre class="run-response">') == 6  # both models in each of the three runs
