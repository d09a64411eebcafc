"""`python -m invscale_demo`: the demo (invscale_demo/demo.py)."""

from invscale_demo.demo import main

main()
