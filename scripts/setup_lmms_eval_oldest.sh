#!/usr/bin/env bash
# Idempotent set-up of .venv-lmms-eval-0.7: the oldest lmms-eval this package supports (pyproject.toml:
# lmms-eval>=0.7,<0.8), for CI to run the tests against it as well as against the newest in .venv.
#
# It is layered on .venv instead of being a second 5.5 GB environment: a .pth file puts .venv's
# site-packages (torch, transformers, this package's editable install...) after its own, so pip installs
# only lmms-eval 0.7 and what 0.7 needs beyond .venv (black, isort), and its lmms_eval shadows .venv's.
# (venv --system-site-packages would layer on the base interpreter, not on .venv.) Run after setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST=0.7
VENV=.venv-lmms-eval-$OLDEST
if [ ! -x .venv/bin/python ]; then
    echo "error: .venv does not exist; run scripts/setup.sh first" >&2
    exit 1
fi
stamp="$VENV/.installed-$(sha1sum pyproject.toml | cut -c1-12)"
if [ -f "$stamp" ]; then exit 0; fi
base_python=$(.venv/bin/python -c "import sys; print(sys._base_executable)")
[ -x "$VENV/bin/python" ] || "$base_python" -m venv "$VENV"
base_site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
own_site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "import site; site.addsitedir('$(realpath "$base_site")')" > "$own_site/zz_base_venv.pth"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "lmms-eval==$OLDEST"
# the launcher runs `accelerate` from beside the interpreter: the same version, with its script in $VENV/bin
accelerate=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('accelerate'))")
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "accelerate==$accelerate"
"$VENV/bin/python" - "$OLDEST" <<'PY'
import importlib.metadata, pathlib, sys, sysconfig
import lmms_eval
own = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
where = pathlib.Path(lmms_eval.__file__).resolve()
if importlib.metadata.version("lmms-eval") != sys.argv[1] or own not in where.parents:
    sys.exit(f"error: imports lmms-eval {importlib.metadata.version('lmms-eval')} from {where}, not {sys.argv[1]} from {own}")
PY
rm -f "$VENV"/.installed-*
touch "$stamp"
