#!/usr/bin/env bash
# Idempotent set-up: a Python 3.11 virtual environment in .venv with this package, lmms-eval 0.7.3 and
# the test tools. Re-running it is a no-op unless pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
stamp=.venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)
if [ -f "$stamp" ]; then exit 0; fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# torch first and pinned: unpinned, lmms-eval's torchvision requirement swaps in another torch build.
# 2.14.1 + torchvision 0.29.1 is the pair the Qwen processors of transformers 5.x work with (CPU or GPU).
.venv/bin/pip install --quiet --disable-pip-version-check torch==2.14.1 torchvision==0.29.1
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[test,labelstudio]'
# pyiqa (cait-quality's NIQE/BRISQUE) without its dependencies: see the `study` extra in pyproject.toml
.venv/bin/pip install --quiet --disable-pip-version-check --no-deps 'pyiqa==0.1.16'
rm -f .venv/.installed-*
touch "$stamp"
