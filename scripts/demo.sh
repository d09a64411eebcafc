#!/usr/bin/env bash
# The main job on the embedded default: tiny local models, bundled fixtures, CPU, a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m invscale_demo "$@"
