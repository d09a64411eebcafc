"""What the flip explorer costs at paper scale: `report`'s time and disk with and without it, and how fast its
pages open in Chromium.

    .venv/bin/python perf/bench_explorer.py [--workdir DIR] [--repeats 2] [--pages 5] [--image-size 1024]
                                            [--no-cold] [--no-pages] [--prepare-only]

1. Local fixture data large enough to hold every paper question (invscale_demo/fixtures.py at scale 722, MMMU
   test at 10,500 rows; 96 x 96 drawn images, each one different) and a task folder reading it (kept in --workdir
   and reused by the next run with that workdir: give another workdir for another --image-size).
   `--image-size N` draws N x N photo-like images instead (smooth colour fields with fine grain, the fixture's
   square and a number on them, stored as JPEG in the data as most benchmark photos are), so that the explorer's
   image files have realistic sizes; at 1024 that fixture took 28 minutes and 5.9 GB to build here, and the
   first explorer run (9,276 images re-encoded) 3.5 CPU minutes and a peak of 14 GB of memory.
2. The synthetic paper-scale logs of bench_postprocess.py (19 registry models, 29,386 questions each, 558,334
   records), their question ids replaced by the fixture's, split by split, so that every flipped question
   reloads with its images.
3. `report --cache-dir` once to fill the cache, then `report --explorer none` and `report --tasks-dir ...`
   (the explorer's default: a page per case) in a fresh process: once with no explorer entry in the cache (every
   question reloaded from the data; `--no-cold` skips it and keeps the cache), then --repeats times with it
   (best kept): wall and CPU seconds (user + system of the process and its children), and the output folder's
   size and file count. A repeat writes over the previous run's folder (as a user's rerun does: report
   replaces the previous output, removing its files, which is counted).
4. Chromium (headless, file://) opens the case pages with the most flips and the median one, the index and
   report.html: the time from navigation to the end of the page's script (the flip list's first render,
   explorer.FIRST_RENDER flips at most; performance.now()) and to the load event.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

FIXTURE_SCALE = 722  # MMBench's 4,329 questions need 6 x 722 fixture rows, the largest need but MMMU test's
MMMU_TEST_ROWS = 10_500
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PROBE = """<script>
window.addEventListener('load', () => {
  const nav = performance.getEntriesByType('navigation')[0];
  const out = document.createElement('pre');
  out.id = 'page-timing';
  out.textContent = JSON.stringify({rendered_ms: window.__rendered, load_ms: nav.loadEventStart,
                                    flips: document.querySelectorAll('li.flip').length,
                                    images: [...document.images].filter(i => i.complete && i.naturalWidth).length});
  document.body.appendChild(out);
});
</script>"""
RENDERED = "<script>window.__rendered = performance.now();</script>"


def distinct_images(size: int = 96):
    """A stand-in for fixtures.drawn_image whose every call draws a different image (its number written on the
    fixture's square), so that the explorer stores one file per question as with real data."""
    from itertools import count

    from PIL import ImageDraw

    from invscale_demo import fixtures

    drawn, numbers = fixtures.drawn_image, count()

    def image(seed: int, size: int = size):
        picture = drawn(seed, size)
        ImageDraw.Draw(picture).text((2, size - 12), str(next(numbers)), fill=(255, 255, 255))
        return picture

    return image


def photo_base(seed: int, size: int):
    """A photo-like picture: colour fields at three scales (bicubic upsampling) plus fine grain, so that it
    compresses like a photograph (about 2 MB as PNG, 170 KB as JPEG quality 85 at 1024 x 1024), not like a
    flat drawing."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    out = np.full((size, size, 3), 128.0, np.float32)
    for cells, amplitude in ((4, 90), (16, 45), (64, 20)):
        field = Image.fromarray((rng.random((cells, cells, 3)) * 255).astype(np.uint8)).resize((size, size),
                                                                                              Image.BICUBIC)
        out += (np.asarray(field, np.float32) - 128) * amplitude / 128
    out += rng.normal(0, 6, (size, size, 3)).astype(np.float32)
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))


def distinct_photos(size: int, bases: int = 16):
    """distinct_images with real-size photo-like pictures: one of `bases` photo_base pictures with the fixture's
    square and the call's number on it (each call a different image), encoded once as JPEG (quality 75) and
    returned undecoded, saving those bytes whatever the format asked: the fixture's data holds JPEG as the
    benchmarks' photos are (datasets, the MME image files and the AI2D TSV's base64 all go through save), and
    a split of thousands of them fits in memory."""
    import io
    from itertools import count
    from types import MethodType

    from PIL import Image, ImageDraw

    from invscale_demo import fixtures

    pool, numbers = [photo_base(1000 + b, size) for b in range(bases)], count()

    def image(seed: int, size: int = size):
        number = next(numbers)
        picture = pool[number % bases].copy()
        name = list(fixtures.COLOURS)[seed % len(fixtures.COLOURS)]
        offset, side = (seed * 7) % (size // 2), size // 3
        draw = ImageDraw.Draw(picture)
        draw.rectangle([offset, offset, offset + side, offset + side], fill=fixtures.COLOURS[name])
        draw.text((8, size - 24), str(number), fill=(255, 255, 255))
        buffer = io.BytesIO()
        picture.save(buffer, format="JPEG", quality=75)
        encoded = buffer.getvalue()
        opened = Image.open(io.BytesIO(encoded))

        def save_bytes(self, fp, format=None, **params):  # noqa: A002 (PIL's name)
            if isinstance(fp, (str, Path)):
                Path(fp).write_bytes(encoded)
            else:
                fp.write(encoded)

        opened.save = MethodType(save_bytes, opened)
        return opened

    return image


def fixture_tasks(workdir: Path, image_size: int | None = None) -> Path:
    """The task folder over fixture data holding at least the paper's questions of every split (image_size:
    distinct_photos of that size instead of 96 x 96 drawings)."""
    import datasets

    from invscale_demo import fixtures
    from invscale_demo.fixtures import MMMU_FEATURES, mmmu_rows, write_fixtures
    from lmms_eval_tasks.install import export_tasks

    tasks = workdir / "tasks"
    if tasks.exists():
        return tasks
    fixtures.drawn_image = distinct_photos(image_size) if image_size else distinct_images()
    data = write_fixtures(workdir / "fixtures", scale=FIXTURE_SCALE)
    mmmu_test = workdir / "fixtures" / "mmmu_test_paper.parquet"
    datasets.Dataset.from_list(mmmu_rows("test", with_answers=False, count=MMMU_TEST_ROWS),
                               features=MMMU_FEATURES).to_parquet(str(mmmu_test))
    data["invscale_mmmu_test"] = str(mmmu_test)
    return export_tasks(tasks, data)


def write_paper_logs(logs: Path, tasks: Path) -> int:
    """The synthetic paper-scale logs with the fixture's question ids; returns the records written."""
    from bench_postprocess import write_table_logs
    from synthetic import per_question_table

    from lmms_eval_tasks.benchmarks import BENCHMARKS
    from lmms_eval_tasks.hooks import questions_for
    from postprocess.logs.questions import dataset_source, load_split

    table, models = per_question_table(1, categorical=False)
    for spec in BENCHMARKS:
        rows = (table["benchmark"] == spec.name) & (table["split"] == spec.split)
        if not rows.any():
            continue
        ids = [q.question_id for q in questions_for(load_split(dataset_source(spec, tasks), spec.task), spec)[1]]
        synthetic = list(dict.fromkeys(table.loc[rows, "question_id"]))
        if len(ids) < len(synthetic):
            raise SystemExit(f"{spec.name} {spec.split}: the fixture has {len(ids)} questions, the logs need "
                             f"{len(synthetic)}")
        table.loc[rows, "question_id"] = table.loc[rows, "question_id"].map(dict(zip(synthetic, ids)))
    return write_table_logs(table, models, logs)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `command`, which must succeed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    error = process.stderr.read().decode()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{error[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def folder_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def open_page(page: Path, profile: Path) -> dict:
    """The page's timing in Chromium (PROBE), from a copy carrying the probe."""
    probed = page.with_name(f"timed-{page.name}")
    text = page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1)
    probed.write_text(text.replace("</body>", RENDERED + "</body>", 1), encoding="utf-8")
    started = time.perf_counter()
    result = subprocess.run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                             probed.as_uri()], check=False, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    probed.unlink()
    found = re.search(r'<pre id="page-timing">(.*?)</pre>', result.stdout, re.DOTALL)
    if not found:
        raise RuntimeError(f"{page}: no timing:\n{result.stderr[-2000:]}")
    return {**json.loads(found.group(1).replace("&quot;", '"')), "chromium_wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_explorer"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--pages", type=int, default=5, help="case pages opened in Chromium (most flips first)")
    parser.add_argument("--image-size", type=int, default=None,
                        help="N x N photo-like fixture images (default 96 x 96 drawings); a new --workdir for it")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the first explorer run that reloads every question (keep the cache's)")
    parser.add_argument("--no-pages", action="store_true", help="do not open pages in Chromium")
    parser.add_argument("--prepare-only", action="store_true", help="build the fixture and the logs, then stop")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    size_file = args.workdir / "image_size.txt"
    if (args.workdir / "tasks").exists():
        built = size_file.read_text().strip() if size_file.exists() else "96"
        if built != str(args.image_size or 96):
            raise SystemExit(f"{args.workdir} holds a fixture of {built} px images: give another --workdir")
    tasks = fixture_tasks(args.workdir, args.image_size)
    size_file.write_text(str(args.image_size or 96))
    logs = args.workdir / "logs"
    if not logs.exists():
        print(f"{write_paper_logs(logs, tasks):,} records written to {logs}", file=sys.stderr)
    print(f"fixtures and logs ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.prepare_only:
        return
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    cache = args.workdir / "cache"
    base = [sys.executable, "-m", "postprocess", "report", "--logs", str(logs), "--cache-dir", str(cache)]
    timed([*base, "--out", str(args.workdir / "warm"), "--explorer", "none"], env)  # fills the cache
    runs = {"without the explorer (--explorer none)": (["--explorer", "none"], args.repeats),
            "with the explorer, first run (questions reloaded from --tasks-dir)": (["--tasks-dir", str(tasks)], 1),
            "with the explorer, again (questions from --cache-dir)": (["--tasks-dir", str(tasks)], args.repeats)}
    if args.no_cold:
        del runs["with the explorer, first run (questions reloaded from --tasks-dir)"]
    else:
        shutil.rmtree(cache / "explorer", ignore_errors=True)  # the first explorer run reloads every question
    rows = []
    for name, (options, repeats) in runs.items():
        out = args.workdir / f"out_{len(rows)}"
        measured = [timed([*base, "--out", str(out), *options], env) for _ in range(repeats)]
        size, files = folder_size(out)
        explorer = folder_size(out / "explorer") if (out / "explorer").exists() else (0, 0)
        rows.append((name, min(c for c, _ in measured), min(w for _, w in measured), size, files, explorer, out))
    print("| report | CPU s (user+sys) | wall s | output folder | files | explorer/ |")
    print("|---|---|---|---|---|---|")
    for name, cpu, wall, size, files, explorer, _ in rows:
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | {size / 2**20:.1f} MiB | {files:,} | "
              f"{explorer[0] / 2**20:.1f} MiB in {explorer[1]:,} files |")
    for name, cpu, wall, *_ in rows[1:]:
        print(f"\n{name}: the explorer adds {100 * (cpu / rows[0][1] - 1):.0f}% CPU and "
              f"{100 * (wall / rows[0][2] - 1):.0f}% wall time")
    print(f"best of {args.repeats} (the first explorer run once); {os.cpu_count()} CPUs")
    out = rows[-1][-1]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    images = len(list((out / "explorer" / "images").iterdir()))
    print(f"{summary['cases']} cases, {images:,} distinct images, "
          f"{sum(1 for _ in (out / 'explorer' / 'pages').iterdir())} pages; credibility: {summary['credibility']}")
    if args.no_pages or shutil.which("chromium") is None:
        print("pages not opened" if args.no_pages else "no chromium: pages not opened")
        return
    import pandas as pd

    cases = pd.read_csv(out / "cases.csv")
    cases["flips"] = cases["flip_inv"] + cases["flip_norm"]
    from postprocess.inverse_scaling.cases import CASE_KEY
    from postprocess.render.explorer import page_name

    ordered = cases.sort_values("flips", ascending=False).to_dict("records")
    chosen = [*ordered[:args.pages], ordered[len(ordered) // 2]]  # the largest pages, and the median one
    print("\n| page | flips (drawn at open / the case's) | images shown | script done (ms) | load event (ms) | "
          "chromium process (s) |")
    print("|---|---|---|---|---|---|")
    timings = []
    for row in chosen:
        page = out / "explorer" / page_name(tuple(row[c] for c in CASE_KEY))
        timing = open_page(page, args.workdir / "profile")
        timings.append(timing)
        print(f"| {page.name} | {timing['flips']} / {row['flips']} | {timing['images']} | {timing['rendered_ms']:.0f} | "
              f"{timing['load_ms']:.0f} | {timing['chromium_wall_s']:.2f} |")
    index = open_page(out / "explorer" / "index.html", args.workdir / "profile")
    print(f"| index.html | - | - | {index['rendered_ms']:.0f} | {index['load_ms']:.0f} | "
          f"{index['chromium_wall_s']:.2f} |")
    report = open_page(out / "report.html", args.workdir / "profile")  # its case rows link to the pages
    print(f"| report.html | - | {report['images']} | {report['rendered_ms']:.0f} | {report['load_ms']:.0f} | "
          f"{report['chromium_wall_s']:.2f} |")
    print(f"\nmedian load event over the pages: {statistics.median(t['load_ms'] for t in timings):.0f} ms")


if __name__ == "__main__":
    main()
