"""What `invscale validate` costs on real-size images: MMBench-shaped rows whose images are photo-like JPEGs of
--size pixels, checked by lmms_eval_tasks.validation.check_data (every row through the adapter, every image
decoded).

    .venv/bin/python perf/bench_validate.py [--rows 2000] [--size 1024] [--repeats 2]

Prints rows per second and milliseconds per row (best of --repeats), and the file's size.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def photo(seed: int, size: int) -> bytes:
    """A noisy gradient: compresses as a photograph does, not as a flat drawing."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    ramp = np.linspace(0, 255, size, dtype=np.float32)
    pixels = np.stack([np.add.outer(ramp, ramp[::-1]) / 2, np.add.outer(ramp[::-1], ramp) / 2,
                       np.full((size, size), 128.0)], axis=-1)
    pixels = np.clip(pixels + rng.normal(0, 24, pixels.shape), 0, 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--size", type=int, default=1024, help="image side in pixels")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import datasets

    from invscale_demo.fixtures import mmbench_rows
    from lmms_eval_tasks.validation import check_data

    rows, features = mmbench_rows(args.rows)
    images = [photo(seed, args.size) for seed in range(16)]  # 16 distinct photos, reused: decoding is the cost
    for i, row in enumerate(rows):
        row["image"] = {"bytes": images[i % len(images)], "path": None}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mmbench_dev_en.parquet"
        datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            check = check_data("invscale_mmbench_dev_en", str(path))
            best = min(best, time.perf_counter() - start)
        assert not check.problems, check.problems[:3]
        print(f"| rows | image | file | best wall s | rows/s | ms/row |\n|---|---|---|---|---|---|\n"
              f"| {check.rows} | {args.size}x{args.size} JPEG | {path.stat().st_size / 2**20:.1f} MiB | {best:.2f} | "
              f"{check.rows / best:.0f} | {1000 * best / check.rows:.2f} |")


if __name__ == "__main__":
    main()
