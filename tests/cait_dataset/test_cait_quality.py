"""cait-quality (cait_dataset/quality.py): the datasets it reads, NIQE and BRISQUE through pyiqa with local
parameter files, CLIP caption similarities on a tiny random CLIP, and the Tables 9-10 frames.

Offline, the parameter files and CLIP are built here (tests/support/quality_factory.py): the tests check that the
configured files are the ones used, that scores order clean < distorted, and the CLIP arithmetic. They
cannot check the published NIQE/BRISQUE models or CLIP ViT-B/32 (the paper's 3.08 / 8.12 / 0.295), which
pyiqa and transformers download from the hub on first use.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from cait_dataset import quality
from cait_dataset.__main__ import main as cait_dataset_main
from cait_dataset.cli import quality_main
from invscale_demo.fixtures import write_cait_fixture
from lmms_eval_tasks.question import DocError

from quality_factory import SIZE, fit_brisque_params, fit_niqe_params, noisy, scene, tiny_clip


@pytest.fixture(scope="module")
def params(tmp_path_factory):
    root = tmp_path_factory.mktemp("iqa_params")
    clean = [scene(seed) for seed in range(6)]
    return {"niqe": fit_niqe_params(clean, root / "niqe.mat"), "brisque": fit_brisque_params(clean, root / "brisque.pth")}


@pytest.fixture(scope="module")
def clip_model(tmp_path_factory):
    return tiny_clip(tmp_path_factory.mktemp("tiny_clip"))


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """Three unseen clean scenes and their noisy copies, as files."""
    root = tmp_path_factory.mktemp("images")
    paths = {"clean": [], "noisy": []}
    for i in range(3):
        image = scene(100 + i)
        for kind, picture in (("clean", image), ("noisy", noisy(image, i))):
            path = root / f"{kind}_{i}.png"
            picture.save(path)
            paths[kind].append(str(path))
    return paths


def write_captions(folder, rows, header="image,correct_caption,reversed_caption"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "captions.csv"
    path.write_text(header + "\n" + "".join(",".join(row) + "\n" for row in rows))
    return path


# ---------------------------------------------------------------------------------------------- datasets
def test_a_cait_folder_pairs_each_image_with_what_it_shows_and_the_common_reading(tmp_path):
    items = quality.cait_items(write_cait_fixture(tmp_path / "cait"))
    assert len(items) == 8 and set(items["dataset"]) == {"CAIT"}
    first = items.iloc[0]
    assert (first["correct_caption"], first["reversed_caption"]) == ("A student scolds a teacher.",
                                                                    "A teacher scolds a student.")


def test_a_captioned_csv_resolves_images_beside_it_and_names_the_bad_line(tmp_path):
    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    good = quality.captioned_items(write_captions(tmp_path, [("a.png", "x bites y", "y bites x")]), "W")
    assert good.iloc[0]["image"] == str(tmp_path / "a.png")
    with pytest.raises(DocError, match=r"captions.csv:3: field 'reversed_caption' is empty"):
        quality.captioned_items(write_captions(tmp_path, [("a.png", "x", "y"), ("a.png", "x", " ")]), "W")
    with pytest.raises(DocError, match=r"captions.csv:2: field 'image' names .*b.png, which does not exist"):
        quality.captioned_items(write_captions(tmp_path, [("b.png", "x", "y")]), "W")
    with pytest.raises(DocError, match=r"missing column\(s\) \['reversed_caption'\]"):
        quality.captioned_items(write_captions(tmp_path, [("a.png", "x")], header="image,correct_caption"), "W")


def test_an_image_folder_lists_image_files_only(tmp_path):
    for name in ("b.jpg", "a.png", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    Image.new("RGB", (8, 8)).save(tmp_path / "a.png")
    items = quality.folder_items(tmp_path, "Plain")
    assert [p.rsplit("/", 1)[1] for p in items["image"]] == ["a.png", "b.jpg"]
    assert items["correct_caption"].isna().all()
    (tmp_path / "empty").mkdir()
    with pytest.raises(DocError, match="no image files"):
        quality.folder_items(tmp_path / "empty", "E")


def test_winoground_export_gives_each_image_its_own_caption_as_the_correct_one(tmp_path):
    import datasets

    red, blue = Image.new("RGB", (40, 30), (200, 0, 0)), Image.new("RGB", (40, 30), (0, 0, 200))
    data = datasets.Dataset.from_dict({"id": [7], "image_0": [red], "image_1": [blue],
                                       "caption_0": ["a mug in some grass"], "caption_1": ["some grass in a mug"]})
    items = quality.captioned_items(quality.winoground_export(data, tmp_path), "Winoground")
    assert list(items["correct_caption"]) == ["a mug in some grass", "some grass in a mug"]
    assert list(items["reversed_caption"]) == ["some grass in a mug", "a mug in some grass"]
    assert Image.open(items["image"][1]).getpixel((0, 0)) == (0, 0, 200)


# ---------------------------------------------------------------------------------------------- scores
def test_niqe_and_brisque_use_the_given_parameter_files_and_rank_noise_worse(params, images):
    for metric in ("niqe", "brisque"):
        (clean, clean_notes), (distorted, noisy_notes) = (quality.iqa_scores(images[kind], metric, params[metric], "cpu")
                                                          for kind in ("clean", "noisy"))
        assert all(math.isfinite(v) for v in clean + distorted) and set(clean_notes + noisy_notes) == {None}
        assert max(clean) < min(distorted), metric


def test_an_unscorable_image_is_nan_with_its_reason_and_an_unreadable_file_is_an_error(params, tmp_path):
    with pytest.raises(ValueError, match="unknown quality metric 'piqe'"):
        quality.iqa_scores([], "piqe")
    flat = tmp_path / "flat.png"
    Image.new("RGB", (SIZE, SIZE), (10, 10, 10)).save(flat)
    for metric in ("niqe", "brisque"):
        scores, notes = quality.iqa_scores([str(flat)], metric, params[metric], "cpu")
        assert math.isnan(scores[0]) and notes[0].startswith(f"{metric}: "), notes
    (tmp_path / "broken.png").write_bytes(b"not an image")
    with pytest.raises(DocError, match=r"broken.png: not a readable image"):
        quality.iqa_scores([str(flat), str(tmp_path / "broken.png")], "niqe", params["niqe"], "cpu")


def test_cait_images_are_scored_at_the_papers_512_pixels(params, tmp_path):
    """CAIT's images are 512 x 512 (CAIT Appendix A's generation prompt); NIQE and BRISQUE depend on
    resolution, so a 1024 x 1024 image (what Gemini returns) is scored as its 512 x 512 Lanczos resize."""
    big = scene(7).resize((1024, 1024), Image.Resampling.LANCZOS)
    big.save(tmp_path / "big.png")
    big.resize((512, 512), Image.Resampling.LANCZOS).save(tmp_path / "small.png")
    for metric in ("niqe", "brisque"):
        at_paper_size, _ = quality.iqa_scores([str(tmp_path / "big.png")], metric, params[metric], "cpu", sizes=[512])
        resized_file, _ = quality.iqa_scores([str(tmp_path / "small.png")], metric, params[metric], "cpu")
        as_stored, _ = quality.iqa_scores([str(tmp_path / "big.png")], metric, params[metric], "cpu")
        assert at_paper_size[0] == pytest.approx(resized_file[0], rel=1e-4)
        assert as_stored[0] != pytest.approx(at_paper_size[0], rel=1e-4), metric
    assert set(quality.cait_items(write_cait_fixture(tmp_path / "cait"))["score_size"]) == {512}


def test_clip_similarities_are_cosines_with_margin_correct_minus_reversed(clip_model, images):
    paths = images["clean"] + images["noisy"]
    correct = ["a dog walks a man", "a teacher scolds a student", "a book reads a girl"] * 2
    reversed_ = ["a man walks a dog", "a student scolds a teacher", "a girl reads a book"] * 2
    one = quality.clip_similarities(paths, correct, reversed_, str(clip_model), "cpu", batch_size=1)
    four = quality.clip_similarities(paths, correct, reversed_, str(clip_model), "cpu", batch_size=4)
    swapped = quality.clip_similarities(paths, reversed_, correct, str(clip_model), "cpu")
    same = quality.clip_similarities(paths, correct, correct, str(clip_model), "cpu")
    assert ((one[["clip_correct", "clip_reversed"]].abs()) <= 1 + 1e-6).all().all()
    np.testing.assert_allclose(one["clip_margin"], one["clip_correct"] - one["clip_reversed"])
    np.testing.assert_allclose(one.to_numpy(), four.to_numpy(), atol=1e-5)  # batching changes nothing
    np.testing.assert_allclose(swapped["clip_margin"], -one["clip_margin"], atol=1e-6)
    np.testing.assert_allclose(same["clip_margin"], 0, atol=1e-6)
    assert one["clip_margin"].abs().max() > 0  # the two captions do differ for the model


def test_score_items_leaves_clip_empty_for_uncaptioned_images(params, clip_model, images):
    items = pd.concat([
        pd.DataFrame({"dataset": "A", "image": images["clean"], "correct_caption": "x bites y", "reversed_caption": "y bites x"}),
        pd.DataFrame({"dataset": "B", "image": images["noisy"], "correct_caption": None, "reversed_caption": None}),
    ], ignore_index=True)
    scored = quality.score_items(items, ["niqe", "clip"], niqe_params=params["niqe"], clip_model=str(clip_model),
                                 device="cpu")
    assert scored["niqe"].notna().all() and scored["brisque"].isna().all()
    assert scored.loc[scored["dataset"] == "A", "clip_correct"].notna().all()
    assert scored.loc[scored["dataset"] == "B", "clip_correct"].isna().all()
    with pytest.raises(ValueError, match=r"unknown metric\(s\) \['fid'\]"):
        quality.score_items(items, ["fid"])


# ---------------------------------------------------------------------------------------------- tables
scores_strategy = st.lists(st.tuples(st.sampled_from(["CAIT", "Winoground", "Other"]),
                                     st.one_of(st.floats(0, 100), st.just(math.nan)),
                                     st.floats(-1, 1), st.floats(-1, 1)), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(scores_strategy)
def test_tables_are_per_dataset_means_over_finite_scores(rows):
    frame = pd.DataFrame(rows, columns=["dataset", "niqe", "clip_correct", "clip_reversed"])
    frame = frame.assign(image="x", correct_caption="c", reversed_caption="r", brisque=frame["niqe"] * 2,
                         clip_margin=frame["clip_correct"] - frame["clip_reversed"])
    perceptual, alignment = quality.perceptual_table(frame), quality.clip_table(frame)
    assert list(perceptual["dataset"]) == list(dict.fromkeys(frame["dataset"]))  # first-seen order
    for row in perceptual.to_dict("records"):
        group = frame[frame["dataset"] == row["dataset"]]
        assert row["images"] == len(group) and row["niqe_unscored"] == group["niqe"].isna().sum()
        expected = group["niqe"].dropna().mean() if group["niqe"].notna().any() else math.nan
        assert row["niqe"] == pytest.approx(expected, nan_ok=True)
    for row in alignment.to_dict("records"):
        group = frame[frame["dataset"] == row["dataset"]]
        assert row["margin"] == pytest.approx(row["correct"] - row["reversed"], abs=1e-9)
        assert row["correct"] == pytest.approx(group["clip_correct"].mean())


# ---------------------------------------------------------------------------------------------- command line
def test_the_command_writes_tables_9_and_10_with_one_row_per_dataset_in_order(tmp_path, params, clip_model, images):
    cait = write_cait_fixture(tmp_path / "cait")
    for image in sorted((cait / "images").iterdir()):  # NIQE needs images of at least 96 x 96 pixels
        scene(int(image.stem[-3:])).save(image)
    winoground = write_captions(tmp_path / "wino", [(path, "a dog walks a man", "a man walks a dog")
                                                    for path in images["noisy"]])
    plain = tmp_path / "plain"
    plain.mkdir()
    scene(200).save(plain / "scene.png")
    Image.new("RGB", (SIZE, SIZE), (90, 90, 90)).save(plain / "flat.png")  # NIQE cannot fit a flat image
    out = tmp_path / "out"
    code = cait_dataset_main(["quality", "score", "--captions", f"Winoground={winoground}", "--cait", str(cait),
                              "--images", f"Plain={plain}", "--out", str(out),
                              "--niqe-params", str(params["niqe"]), "--brisque-params", str(params["brisque"]),
                              "--clip-model", str(clip_model), "--device", "cpu"])
    assert code == 0
    table9 = pd.read_csv(out / "table09_perceptual_quality_values.csv")
    table10 = pd.read_csv(out / "table10_clip_alignment_values.csv")
    assert list(table9["dataset"]) == ["Winoground", "CAIT", "Plain"] and list(table9["images"]) == [3, 8, 2]
    assert list(table10["dataset"]) == ["Winoground", "CAIT"]  # the plain folder has no captions
    by_dataset = table9.set_index("dataset")
    assert by_dataset.loc["Winoground", "niqe"] > by_dataset.loc["CAIT", "niqe"]  # noisy vs clean scenes
    assert (by_dataset.loc["Plain", "niqe_unscored"], by_dataset.loc["CAIT", "niqe_unscored"]) == (1, 0)
    scores = pd.read_csv(out / "scores.csv")
    assert len(scores) == 13 and scores["unscored_because"].notna().sum() == 1
    table9_text = (out / "table09_perceptual_quality.md").read_text()
    assert "Images without a finite score, left out of the mean: Plain NIQE 1" in table9_text
    assert "CAIT scored at 512 × 512 (the paper's CAIT size" in table9_text
    markdown = (out / "table10_clip_alignment.md").read_text()
    assert "paper Table 10" in markdown and "| Winoground" in markdown


def test_the_command_rejects_bad_input_with_one_line(tmp_path, capsys):
    assert quality_main(["score", "--out", str(tmp_path)]) == 2
    assert "no dataset given" in capsys.readouterr().err
    cait = write_cait_fixture(tmp_path / "cait")
    assert quality_main(["score", "--cait", str(cait), "--cait", str(cait), "--out", str(tmp_path)]) == 2
    assert "dataset names must differ" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        quality_main(["score", "--images", str(cait), "--out", str(tmp_path)])  # an image folder needs a name
