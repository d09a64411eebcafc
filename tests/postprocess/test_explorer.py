"""The flip explorer (postprocess/render/explorer.py) and flips.parquet: every flip of a case appears once on its
page and the page's counts are the case's FlipInv and FlipNorm (property tests on random tables); on the demo-like
fixture logs, the images as the models saw them are files (thumbnails and full size), each question and each image
is stored once, and without the data the pages still build and say why the question is missing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_factory import random_table
from explorer_factory import fixture_questions, write_chance_logs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from postprocess.cli import main
from postprocess.inverse_scaling.analysis import run_analysis
from postprocess.inverse_scaling.cases import CASE_KEY
from postprocess.inverse_scaling.credibility import FLIP_COLUMNS
from postprocess.inverse_scaling.parameters import Parameters
from postprocess.render.explorer import FIRST_RENDER, ExplorerInput, page_name
from postprocess.render.outputs import write_outputs


def page_flips(page: Path) -> tuple[list[list[str]], dict[str, int]]:
    """(the page's [question_id, direction] list, its printed counts per direction). The list is every flip the
    page can show: its script draws the first `batch` of them at once and the rest on scrolling or asking
    (tests/test_explorer_browser.py checks that in Chromium)."""
    text = page.read_text(encoding="utf-8")
    spec = json.loads(re.search(r'<script type="application/json" id="flips">(.*?)</script>', text, re.DOTALL)
                      .group(1).replace("<\\/", "</"))
    assert spec["batch"] == FIRST_RENDER
    counts = {d: int(n) for d, n in re.findall(r'<span id="count-(FlipInv|FlipNorm)">(\d+)</span>', text)}
    return spec["flips"], counts


def all_count(page: Path) -> int:
    """The count on the page's "all" button."""
    return int(re.search(r'<button type="button" data-direction="all">all (\d+)</button>',
                         page.read_text(encoding="utf-8")).group(1))


def true_flips(table: pd.DataFrame, row) -> dict[str, set[str]]:
    """The case's flips straight from the table: questions both answered with a known gold, one of them right."""
    rows = table[(table["benchmark"] == row.benchmark) & (table["split"] == row.split)
                 & (table["subtask"] == row.subtask) & table["correct"].notna() & (table["variant"] == "direct")]
    small = rows[rows["model"] == row.small].set_index("question_id")["correct"]
    large = rows[rows["model"] == row.large].set_index("question_id")["correct"]
    both = small.index.intersection(large.index)
    small, large = small[both].astype(bool), large[both].astype(bool)
    return {"FlipInv": set(both[small & ~large]), "FlipNorm": set(both[~small & large])}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n_models=st.integers(2, 4), n_questions=st.integers(20, 90),
       n_subtasks=st.integers(1, 3), every=st.booleans())
def test_every_flip_of_a_case_is_on_its_page_once_and_the_counts_are_its_flips(tmp_path_factory, seed, n_models,
                                                                              n_questions, n_subtasks, every):
    table, models = random_table(np.random.default_rng(seed), n_models, n_questions, n_subtasks)
    analysis = run_analysis(table, models, Parameters(min_n=5, min_net=1))
    out = tmp_path_factory.mktemp("explorer")
    no_data = out / "no_tasks"  # a task folder without task files: the questions cannot be reloaded
    no_data.mkdir()
    paths = write_outputs(analysis, out / "report", quality=None,
                          explorer=ExplorerInput(table, tasks_dir=no_data, every_comparison=every))
    shown = analysis.comparisons[analysis.comparisons["eligible"] & (analysis.comparisons["case"] | every)]
    for row in shown.itertuples():
        listed, counts = page_flips(paths["explorer"].parent / page_name(tuple(getattr(row, c) for c in CASE_KEY)))
        questions = [question for question, _ in listed]
        assert len(questions) == len(set(questions))  # each flip once
        expected = true_flips(table, row)
        assert {d: {q for q, direction in listed if direction == d} for d in expected} == expected
        assert counts == {"FlipInv": row.flip_inv, "FlipNorm": row.flip_norm}
        # its FlipInv flips first, then its FlipNorm flips; "all" shows both
        assert [direction for _, direction in listed] == ["FlipInv"] * row.flip_inv + ["FlipNorm"] * row.flip_norm
        assert all_count(paths["explorer"].parent / page_name(tuple(getattr(row, c) for c in CASE_KEY))) == (
            row.flip_inv + row.flip_norm)
    flips = pd.read_parquet(paths["flips"])
    assert list(flips.columns) == FLIP_COLUMNS
    assert len(flips) == int((analysis.cases["flip_inv"] + analysis.cases["flip_norm"]).sum())
    index = (paths["explorer"]).read_text(encoding="utf-8")
    assert index.count('"page": "pages/') == len(shown)


# ---------------------------------------------------------------------------------------------- fixture logs
@pytest.fixture(scope="module")
def chance_logs(tmp_path_factory, fixture_tasks):
    folder = tmp_path_factory.mktemp("chance") / "logs"
    registry = write_chance_logs(folder, fixture_questions(fixture_tasks))
    return folder, registry


def report(logs: Path, registry: Path, out: Path, *extra: str) -> Path:
    assert main(["report", "--logs", str(logs), "--out", str(out), "--extra-models", str(registry), "--min-n", "4",
                 "--min-net", "2", *extra]) == 0
    return out


@pytest.fixture(scope="module")
def with_data(chance_logs, fixture_tasks, tmp_path_factory):
    return report(*chance_logs, tmp_path_factory.mktemp("with") / "out", "--tasks-dir", str(fixture_tasks))


def data_files(out: Path) -> dict[str, dict]:
    found = {}
    for path in (out / "explorer" / "data").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        found[path.name] = json.loads(text.split(" = ", 2)[-1].rstrip().rstrip(";"))
    return found


def test_the_pages_show_the_images_as_files_with_thumbnails_and_each_question_once(with_data):
    explorer = with_data / "explorer"
    cases = pd.read_csv(with_data / "cases.csv")
    assert len(cases) > 0 and len(list((explorer / "pages").glob("*.html"))) == len(cases)
    data = data_files(with_data)
    images = [image for payload in data.values() for q in payload["questions"].values() for image in q["images"]]
    assert images and all((explorer / image["full"]).is_file() and (explorer / image["thumb"]).is_file()
                          for image in images)
    assert all((explorer / image["thumb"]).read_bytes()[:3] == b"\xff\xd8\xff" for image in images)  # JPEG
    assert all((explorer / image["full"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for image in images)
    # Each image file once: as many files as distinct images, none inside an HTML page.
    assert len(list((explorer / "images").iterdir())) == len({image["full"] for image in images})
    for page in [*explorer.glob("pages/*.html"), explorer / "index.html", with_data / "report.html"]:
        assert "data:image/jpeg" not in page.read_text(encoding="utf-8")
    # A subtask's questions are in its one data file, each once, whatever the number of cases showing them.
    subtasks = [(p["benchmark"], p["split"], p["subtask"]) for p in data.values()]
    assert len(subtasks) == len(set(subtasks))
    shown = cases.groupby(["benchmark", "split", "subtask"]).size()
    assert (shown > 1).any()  # some subtask has several cases: its questions are still stored once
    flips = pd.read_parquet(with_data / "flips.parquet")
    for payload in data.values():
        mine = flips[(flips["benchmark"] == payload["benchmark"]) & (flips["split"] == payload["split"])
                     & (flips["subtask"] == payload["subtask"])]
        assert set(payload["questions"]) == set(mine["question_id"])
        assert payload["note"] is None and all(q["text"] for q in payload["questions"].values())
        for model in set(mine["small"]) | set(mine["large"]):
            answered = mine[(mine["small"] == model) | (mine["large"] == model)]["question_id"]
            assert set(answered) <= set(payload["answers"][model])


def test_flips_parquet_holds_both_letters_and_how_they_were_obtained(with_data):
    flips = pd.read_parquet(with_data / "flips.parquet")
    cases = pd.read_csv(with_data / "cases.csv")
    assert len(flips) == int((cases["flip_inv"] + cases["flip_norm"]).sum())
    inverse = flips[flips["direction"] == "FlipInv"]
    assert inverse["small_correct"].all() and not inverse["large_correct"].any()
    assert flips["small_rule"].notna().any() and flips["gold"].notna().all()
    assert (flips.loc[flips["large_prediction"].isna(), "large_abstain_reason"].notna()).all()


def test_without_the_data_the_pages_build_and_say_why(chance_logs, tmp_path):
    empty = tmp_path / "no_tasks"
    empty.mkdir()
    out = report(*chance_logs, tmp_path / "out", "--tasks-dir", str(empty))
    data = data_files(out)
    assert data and all(payload["note"] and "no such task file" in payload["note"] for payload in data.values())
    assert all(q["text"] is None and q["images"] == [] and q["options"] for payload in data.values()
               for q in payload["questions"].values() if q["gold"] in "ABCDEFGHI")  # options from the logs
    page = next((out / "explorer" / "pages").glob("*.html")).read_text(encoding="utf-8")
    assert "Question text and images are not available" in page
    assert not list((out / "explorer" / "images").iterdir())


def test_explorer_none_writes_no_explorer_and_comparisons_adds_the_other_pages(chance_logs, tmp_path):
    out = report(*chance_logs, tmp_path / "none", "--explorer", "none")
    assert not (out / "explorer").exists() and "explorer/" not in (out / "report.html").read_text(encoding="utf-8")
    out = report(*chance_logs, tmp_path / "all", "--explorer", "comparisons", "--tasks-dir", str(tmp_path))
    comparisons = pd.read_parquet(out / "comparisons.parquet")
    assert len(list((out / "explorer" / "pages").glob("*.html"))) == len(comparisons)
    index = (out / "explorer" / "index.html").read_text(encoding="utf-8")
    cases = pd.read_csv(out / "cases.csv")
    assert 'id="every"' in index and len(comparisons) > len(cases)
    assert f'<span id="case-count">{len(cases)} cases</span>' in index  # the cases, not the pages


def test_with_another_variant_answering_the_same_questions_the_page_shows_the_analysed_ones(tmp_path):
    """An identity re-run answers every question of the analysed run, differently: a page's answers are the
    analysed run's, and the re-run's are its flips' "other runs", each under its own name."""
    table, models = random_table(np.random.default_rng(7), 3, 60, 1)
    table["response"] = "analysed answer of " + table["model"] + " to " + table["question_id"]
    rerun = table.assign(variant="identity", response="re-run answer of " + table["model"] + " to "
                         + table["question_id"], correct=~table["correct"])
    both = pd.concat([rerun, table], ignore_index=True)  # the re-run's rows first
    analysis = run_analysis(both, models, Parameters(min_n=5, min_net=1))
    assert len(analysis.cases)
    (tmp_path / "no_tasks").mkdir()
    write_outputs(analysis, tmp_path / "out", quality=None,
                  explorer=ExplorerInput(both, tasks_dir=tmp_path / "no_tasks"))
    (payload,) = data_files(tmp_path / "out").values()
    flips = analysis.flips
    for model in set(flips["small"]) | set(flips["large"]):
        mine = set(flips.loc[(flips["small"] == model) | (flips["large"] == model), "question_id"])
        assert {q: a["response"] for q, a in payload["answers"][model].items() if q in mine} == {
            q: f"analysed answer of {model} to {q}" for q in mine}
        assert {q: a["response"] for q, a in payload["runs"]["identity"][model].items() if q in mine} == {
            q: f"re-run answer of {model} to {q}" for q in mine}


def test_with_a_cache_dir_a_question_is_reloaded_once(chance_logs, fixture_tasks, tmp_path, monkeypatch):
    cache = ["--cache-dir", str(tmp_path / "cache"), "--tasks-dir", str(fixture_tasks)]
    first = data_files(report(*chance_logs, tmp_path / "first", *cache))

    def no_reload(*args, **kwargs):
        raise AssertionError("a cached question was reloaded")

    monkeypatch.setattr("postprocess.logs.questions.reload_questions", no_reload)
    out = report(*chance_logs, tmp_path / "second", *cache)
    assert data_files(out) == first  # the same questions and image files, from the cache
    assert all((out / "explorer" / image["full"]).is_file() for payload in first.values()
               for q in payload["questions"].values() for image in q["images"])


def test_a_photo_is_kept_as_jpeg_and_a_drawing_as_png():
    """The explorer's full-size copy: JPEG (quality 85) for an image of many colours, lossless PNG for one of few
    (the fixture's drawings); either way at the image's own size."""
    import io

    from PIL import Image

    from postprocess.render.explorer import _stored_bytes

    rng = np.random.default_rng(0)
    photo = Image.fromarray(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8))
    drawing = Image.new("RGB", (400, 300), (128, 128, 128))
    for picture, kind, magic in ((photo, "jpg", b"\xff\xd8\xff"), (drawing, "png", b"\x89PNG")):
        stored, extension = _stored_bytes(picture)
        assert extension == kind and stored.startswith(magic)
        assert Image.open(io.BytesIO(stored)).size == (400, 300)


def photo_folder(folder: Path, count: int, size: tuple[int, int] = (640, 480)) -> dict[str, bytes]:
    """An explorer-like folder: `count` photo-like JPEGs under images/, their thumbnails and a data file."""
    from PIL import Image

    rng = np.random.default_rng(1)
    for part in ("images", "thumbs", "data"):
        (folder / part).mkdir(parents=True, exist_ok=True)
    written = {}
    for k in range(count):
        smooth = rng.integers(0, 256, (size[1] // 16, size[0] // 16, 3), dtype=np.uint8)
        picture = Image.fromarray(smooth).resize(size, Image.Resampling.BICUBIC)
        picture.save(folder / "images" / f"p{k}.jpg", format="JPEG", quality=85)
        picture.resize((192, 144)).save(folder / "thumbs" / f"p{k}.jpg", format="JPEG", quality=85)
        written[f"p{k}.jpg"] = (folder / "images" / f"p{k}.jpg").read_bytes()
    (folder / "data" / "s.js").write_text("window.EXPLORER_DATA = {};\n")
    return written


def test_over_its_budget_the_explorer_caps_full_size_images_and_says_so(tmp_path):
    from PIL import Image

    from postprocess.render.explorer import PAGE_BYTES, _fit_images, _folder_bytes

    folder = tmp_path / "explorer"
    photo_folder(folder, 12)
    whole = _folder_bytes(folder)
    assert _fit_images(folder, None, 3, None) is None  # no budget: nothing changes
    assert _fit_images(folder, whole + 3 * PAGE_BYTES, 3, None) is None  # within it: nothing changes
    budget = whole // 2
    note = _fit_images(folder, budget, 3, None)
    assert _folder_bytes(folder) + 3 * PAGE_BYTES <= budget
    side = int(re.search(r"capped at (\d+) px", note).group(1))
    assert 192 <= side < 640 and "12 of 12 reduced" in note and "--explorer-max-mb 0" in note
    for path in (folder / "images").iterdir():
        with Image.open(path) as picture:
            assert max(picture.size) <= side and picture.format == "JPEG"
    assert not list((folder / "images").glob("*.part"))


def test_with_a_cache_the_originals_stay_and_reduced_copies_are_kept_by_side(tmp_path):
    import os

    from postprocess.render.explorer import _fit_images, _folder_bytes, _place

    cache, folder = tmp_path / "cache", tmp_path / "explorer"
    originals = photo_folder(cache, 8)
    for part in ("images", "thumbs", "data"):
        (folder / part).mkdir(parents=True)
    _place({f"images/{name}" for name in originals} | {f"thumbs/{name}" for name in originals}, cache, folder)
    budget = _folder_bytes(folder) // 2
    note = _fit_images(folder, budget, 1, cache)
    side = re.search(r"capped at (\d+) px", note).group(1)
    assert {name: (cache / "images" / name).read_bytes() for name in originals} == originals  # untouched
    kept = cache / "reduced" / side
    assert sorted(p.name for p in kept.iterdir()) == sorted(originals)
    assert all(os.path.samefile(folder / "images" / name, kept / name) for name in originals)
    again = tmp_path / "again"  # a rerun links the kept copies instead of reducing again
    for part in ("images", "thumbs", "data"):
        (again / part).mkdir(parents=True)
    _place({f"images/{name}" for name in originals} | {f"thumbs/{name}" for name in originals}, cache, again)
    assert _fit_images(again, budget, 1, cache) == note
    assert all(os.path.samefile(again / "images" / name, kept / name) for name in originals)


def test_a_cached_rerun_at_another_budget_fits_the_new_budget(tmp_path):
    from postprocess.render.explorer import PAGE_BYTES, _fit_images, _folder_bytes, _place

    cache = tmp_path / "cache"
    originals = photo_folder(cache, 8)
    names = {f"images/{name}" for name in originals} | {f"thumbs/{name}" for name in originals}

    def explorer(name: str) -> Path:
        folder = tmp_path / name
        for part in ("images", "thumbs", "data"):
            (folder / part).mkdir(parents=True)
        _place(names, cache, folder)
        return folder

    first = explorer("first")
    whole = _folder_bytes(first)
    notes = {}
    for name, budget in (("first", whole * 6 // 10), ("smaller", whole * 4 // 10), ("larger", whole * 8 // 10)):
        folder = first if name == "first" else explorer(name)
        notes[name] = _fit_images(folder, budget, 1, cache)
        assert _folder_bytes(folder) + PAGE_BYTES <= budget, name
    sides = {name: int(re.search(r"capped at (\d+) px", note).group(1)) for name, note in notes.items()}
    assert sides["smaller"] < sides["first"] < sides["larger"]


def test_images_already_within_the_cap_are_untouched_and_not_counted_as_reduced(tmp_path):
    from PIL import Image

    from postprocess.render.explorer import PAGE_BYTES, _fit_images, _folder_bytes

    folder = tmp_path / "explorer"
    photo_folder(folder, 6)
    small = {}
    for k in range(6):  # 160 px: below any cap (a thumbnail's 192 px at least)
        Image.effect_noise((160, 120), 60).convert("RGB").save(folder / "images" / f"s{k}.jpg", quality=85)
        small[f"s{k}.jpg"] = (folder / "images" / f"s{k}.jpg").read_bytes()
    budget = _folder_bytes(folder) // 2
    note = _fit_images(folder, budget, 1, None)
    assert _folder_bytes(folder) + PAGE_BYTES <= budget
    assert "6 of 12 reduced" in note
    assert {name: (folder / "images" / name).read_bytes() for name in small} == small


def test_when_thumbnails_and_data_alone_exceed_the_budget_the_note_says_so_and_images_stay(tmp_path):
    from postprocess.render.explorer import _fit_images

    folder = tmp_path / "explorer"
    written = photo_folder(folder, 5)
    note = _fit_images(folder, 10_000, 3, None)  # less than the thumbnails take
    assert "over its budget of 0.01 MB: thumbnails, data and pages alone take" in note
    assert "full-size images are kept as the models got them" in note
    assert {name: (folder / "images" / name).read_bytes() for name in written} == written


def test_a_budget_too_small_for_the_images_is_said_on_every_page(chance_logs, fixture_tasks, with_data, tmp_path):
    from postprocess.render.explorer import _folder_bytes

    assert 'id="image-note"' not in (with_data / "explorer" / "index.html").read_text(encoding="utf-8")  # 300 MB
    budget = f"{_folder_bytes(with_data / 'explorer') / 2 / 10**6:.4f}"  # the fixture's drawings are already small
    out = report(*chance_logs, tmp_path / "small", "--tasks-dir", str(fixture_tasks), "--explorer-max-mb", budget)
    pages = [out / "explorer" / "index.html", *(out / "explorer" / "pages").glob("*.html")]
    notes = {re.search(r'<p class="note" id="image-note">(.*?)</p>', page.read_text(encoding="utf-8")).group(1)
             for page in pages}
    assert len(notes) == 1 and f"over its budget of {float(budget):,.4g} MB" in notes.pop()


@pytest.mark.parametrize("value", ["-1", "lots", "inf", "nan"])
def test_a_bad_explorer_budget_is_refused(chance_logs, tmp_path, value, capsys):
    with pytest.raises(SystemExit):
        main(["report", "--logs", str(chance_logs[0]), "--out", str(tmp_path / "x"), "--explorer-max-mb", value])
    assert "--explorer-max-mb" in capsys.readouterr().err


def _damage_images(path: Path, empty: Path) -> None:
    """Each image_1 of a parquet split a missing file, a 0-byte file or damaged bytes, in turn."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    damaged = [[{"bytes": None, "path": str(empty.parent / "missing.png")}, {"bytes": None, "path": str(empty)},
                {"bytes": image["bytes"][:40], "path": None}][i % 3]
               for i, image in enumerate(table.column("image_1").to_pylist())]
    column = table.schema.get_field_index("image_1")
    pq.write_table(table.set_column(column, table.schema.field(column), pa.array(damaged, table.schema.field(column).type)),
                   path)


def test_an_unreadable_image_leaves_the_report_whole_and_is_listed(chance_logs, tmp_path, capsys):
    """A missing, 0-byte or damaged image of a flipped question: the report is written, the page shows the
    question without that image and says why, problems.csv lists it."""
    from invscale_demo.fixtures import write_fixtures
    from lmms_eval_tasks.install import export_tasks

    data = write_fixtures(tmp_path / "data")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    for path in data["invscale_mmmu_dev_val"].split(","):
        _damage_images(Path(path), empty)
    out = report(*chance_logs, tmp_path / "out", "--tasks-dir", str(export_tasks(tmp_path / "tasks", data)))
    problems = pd.read_csv(out / "problems.csv")
    unreadable = problems[problems["kind"] == "unreadable_image"]
    assert len(unreadable) > 0 and (unreadable["benchmark"] == "MMMU").all()
    assert all("no such file" in detail or "not a readable image" in detail for detail in unreadable["detail"])
    shown = [q for payload in data_files(out).values() if payload["benchmark"] == "MMMU"
             for q in payload["questions"].values() if q.get("image_problems")]
    assert len(shown) == len(unreadable) and all(q["text"] for q in shown)
    assert "Left out, cannot be read" in (out / "explorer" / "explorer.js").read_text(encoding="utf-8")
    assert "problems.csv lists them" in capsys.readouterr().err
