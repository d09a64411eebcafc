"""`python -m invscale ...`: the same as the `invscale` command."""

import sys

from invscale.cli import main

sys.exit(main())
