"""report.html in a real browser: Debian's headless Chromium (.ci/run installs it) opens the file, and a probe
script in a copy of it records every error and each image's natural size once the page has loaded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from analysis_factory import constructed_table, models_frame
from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.outputs import write_outputs

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                reason="no chromium here (apt-get install chromium); .ci/run installs it")
# As the machine notes advise: no sandbox as root, and no background traffic on a closed network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => __errors.push(e.message || 'failed to load ' + (e.target.src || e.target.href)), true);
window.addEventListener('load', () => {
  const out = document.createElement('pre');
  out.id = 'browser-check';
  out.textContent = JSON.stringify({errors: __errors,
    images: [...document.images].map(i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))});
  document.body.appendChild(out);
});
</script>"""


def open_in_chromium(html_path, profile) -> tuple[dict, list[str]]:
    """(what the probe saw, the console messages Chromium logged) for the page at html_path."""
    assert CHROMIUM, "chromium is not installed (apt-get install chromium)"
    probed = html_path.with_name("probed.html")
    probed.write_text(html_path.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    result = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                             "--virtual-time-budget=10000", "--dump-dom", probed.as_uri()],
                            capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="browser-check">(.*?)</pre>', result.stdout, re.DOTALL)
    assert found, f"the page never finished loading:\n{result.stderr[-2000:]}"
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(found.group(1).replace("&quot;", '"')), console


def test_report_html_loads_without_errors_and_every_figure_renders(tmp_path):
    analysis = run_analysis(constructed_table(with_controls=True), models_frame(), Parameters())
    paths = write_outputs(analysis, tmp_path / "out", quality=None)
    seen, console = open_in_chromium(paths["report_html"], tmp_path / "profile")
    assert seen["errors"] == [] and console == []
    assert len(seen["images"]) == 2
    assert all(image["complete"] and image["width"] > 0 and image["height"] > 0 for image in seen["images"])


def test_the_probe_sees_a_broken_image_and_a_script_error(tmp_path):
    """The check itself: a page with a broken image and a throwing script fails it."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                    '<img src="data:image/png;base64,AAAA"><script>undefined_function()</script></body></html>')
    seen, console = open_in_chromium(page, tmp_path / "profile")
    assert seen["images"] == [{"complete": True, "width": 0, "height": 0}]
    assert any("undefined_function" in error for error in seen["errors"]) and console
