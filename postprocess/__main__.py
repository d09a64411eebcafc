"""`python -m postprocess ...`: see postprocess/cli/."""

from postprocess.cli import main

raise SystemExit(main())
