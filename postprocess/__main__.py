"""`python -m postprocess ...`: see postprocess/cli.py."""

from postprocess.cli import main

raise SystemExit(main())
