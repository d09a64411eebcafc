"""What keeping the flip explorer within its disk budget costs at paper scale (explorer._fit_images).

    .venv/bin/python perf/bench_explorer_budget.py [--workdir DIR] [--images 9276] [--size 1024] [--max-mb 300]

1. --images photo-like pictures of --size x --size pixels (bench_explorer.photo_base, with a drawn square and a
   number so that each is different), stored as the explorer's first run stores them (explorer._store_image: JPEG
   quality 85 and a thumbnail) in a cache folder kept in --workdir for the next run; 9,276 is the number of
   distinct images the paper-scale explorer shows (bench_explorer.py), 1024 px the photo size it was measured at.
2. An explorer folder like report's: every image and thumbnail linked from the cache, and a data file of the size
   the paper-scale explorer writes (9 MiB).
3. _fit_images at --max-mb: first with no reduced copies in the cache (what a first report pays), then on a
   fresh folder again (a rerun, linking the copies kept by side). CPU seconds of this process, the folder's size
   before and after, the side the full-size images are capped at.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

DATA_BYTES = 9 * 2**20  # the paper-scale explorer's data files (docs/performance.md)
PAGES = 395  # its 394 case pages and index


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build_cache(cache: Path, count: int, size: int) -> list[str]:
    """The cache's images/ and thumbs/ (reused when it holds `count` images already); the image file names."""
    from PIL import ImageDraw

    from bench_explorer import photo_base
    from postprocess.render.explorer import _store_image

    done = cache / "done.txt"
    if done.is_file() and done.read_text() == f"{count} {size}":
        return sorted(p.name for p in (cache / "images").iterdir())
    shutil.rmtree(cache, ignore_errors=True)
    for part in ("images", "thumbs"):
        (cache / part).mkdir(parents=True)
    pool = [photo_base(1000 + b, size) for b in range(16)]
    names = []
    for number in range(count):
        picture = pool[number % len(pool)].copy()
        draw = ImageDraw.Draw(picture)
        offset = (number * 7) % (size // 2)
        draw.rectangle([offset, offset, offset + size // 3, offset + size // 3], fill=(number % 256, 90, 200))
        draw.text((8, size - 24), str(number), fill=(255, 255, 255))
        names.append(Path(_store_image(picture, cache)["full"]).name)
    done.write_text(f"{count} {size}")
    return sorted(names)


def explorer_folder(folder: Path, cache: Path, names: list[str]) -> None:
    from postprocess.render.explorer import _place

    shutil.rmtree(folder, ignore_errors=True)
    for part in ("images", "thumbs", "data"):
        (folder / part).mkdir(parents=True)
    thumbs = {f"thumbs/{Path(name).stem}.jpg" for name in names}
    _place({f"images/{name}" for name in names} | thumbs, cache, folder)
    (folder / "data" / "all.js").write_bytes(b" " * DATA_BYTES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench_explorer_budget"))
    parser.add_argument("--images", type=int, default=9_276)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--max-mb", type=float, default=300, help="the budget in MB (10^6 bytes)")
    args = parser.parse_args()
    from postprocess.render.explorer import _fit_images, _folder_bytes

    cache = args.workdir / "cache"
    started = time.perf_counter()
    names = build_cache(cache, args.images, args.size)
    print(f"{len(names):,} images of {args.size} px in {cache} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    shutil.rmtree(cache / "reduced", ignore_errors=True)
    budget = int(args.max_mb * 10**6)
    print("| run | CPU s | wall s | explorer before | after (+ pages) | note |")
    print("|---|---|---|---|---|---|")
    for run in ("first (reduced copies made)", "again (kept copies linked)"):
        folder = args.workdir / "explorer"
        explorer_folder(folder, cache, names)
        before = _folder_bytes(folder)
        cpu, wall = cpu_seconds(), time.perf_counter()
        note = _fit_images(folder, budget, PAGES, cache)
        cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
        from postprocess.render.explorer import PAGE_BYTES

        after = _folder_bytes(folder) + PAGES * PAGE_BYTES
        print(f"| {run} | {cpu:.1f} | {wall:.1f} | {before / 2**20:,.1f} MiB | {after / 2**20:,.1f} MiB | {note} |")


if __name__ == "__main__":
    main()
