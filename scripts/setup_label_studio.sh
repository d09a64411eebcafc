#!/usr/bin/env bash
# Idempotent set-up of what the Label Studio tests and the human-* commands need (run after setup.sh):
# - .venv-ls: the Label Studio server (pip `label-studio`) in its own virtual environment: it pins its
#   own Django stack, which the analysis environment has no use for. Tests start it on loopback.
# - .venv: the client, `label-studio-sdk`, installed WITHOUT its dependencies: it pins
#   opencv-python-headless<4.13, which would downgrade lmms-eval's opencv-python-headless 5 and numpy,
#   while the parts we use (the REST client) never import cv2. The modules the client does import are
#   the `labelstudio` extra of pyproject.toml, which setup.sh installs.
# LABEL_STUDIO_VENV puts the server's environment elsewhere (e.g. one shared by several checkouts).
set -euo pipefail
cd "$(dirname "$0")/.."
LABEL_STUDIO_VERSION=1.23.2
SDK_VERSION=2.1.2
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
VENV_LS=${LABEL_STUDIO_VENV:-.venv-ls}

stamp="$VENV_LS/.installed-label-studio-$LABEL_STUDIO_VERSION"
if [ ! -f "$stamp" ]; then
    [ -x "$VENV_LS/bin/python" ] || "$PYTHON" -m venv "$VENV_LS"
    "$VENV_LS/bin/pip" install --quiet --disable-pip-version-check "label-studio==$LABEL_STUDIO_VERSION"
    rm -f "$VENV_LS"/.installed-label-studio-*
    touch "$stamp"
fi

if [ ! -x .venv/bin/python ]; then
    echo "error: .venv does not exist; run scripts/setup.sh first" >&2
    exit 1
fi
installed=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('label-studio-sdk'))" 2>/dev/null || true)
if [ "$installed" != "$SDK_VERSION" ]; then
    .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "label-studio-sdk==$SDK_VERSION"
fi
