"""`python -m invscale_cli ...`: the same as the `invscale` command."""

import sys

from invscale_cli.main import main

sys.exit(main())
