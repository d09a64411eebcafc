"""Debian's headless Chromium for the browser tests (tests/postprocess/test_report_browser.py,
test_explorer_browser.py): where it is, the flags it runs with, and a probe that reports what a page did
once it loaded. `needs_chromium` skips a test module where Chromium is absent outside CI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
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
