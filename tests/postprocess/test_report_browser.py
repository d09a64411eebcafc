"""report.html in a real browser: Debian's headless Chromium (.ci/run installs it) opens the file, and a probe
script in a copy of it records every error and each image's natural size once the page has loaded."""

from __future__ import annotations

from analysis_factory import constructed_table, models_frame
from headless_chromium import needs_chromium, open_in_chromium
from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.outputs import write_outputs

pytestmark = needs_chromium


def test_report_html_loads_without_errors_and_every_figure_renders(tmp_path):
    analysis = run_analysis(constructed_table(with_controls=True), models_frame(), Parameters())
    paths = write_outputs(analysis, tmp_path / "out", quality=None)
    seen, console = open_in_chromium(paths["report_html"], tmp_path / "profile")
    assert seen["errors"] == [] and console == []
    assert len(seen["images"]) == 3  # Figures 1 and 2, and the family-wide trend's
    assert all(image["complete"] and image["width"] > 0 and image["height"] > 0 for image in seen["images"])


def test_the_probe_sees_a_broken_image_and_a_script_error(tmp_path):
    """The check itself: a page with a broken image and a throwing script fails it."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                    '<img src="data:image/png;base64,AAAA"><script>undefined_function()</script></body></html>')
    seen, console = open_in_chromium(page, tmp_path / "profile")
    assert seen["images"] == [{"complete": True, "width": 0, "height": 0}]
    assert any("undefined_function" in error for error in seen["errors"]) and console
