"""The top floor: the `invscale` command, one front door over the project's command lines (main.py). It imports
the parts it dispatches to; nothing imports it (tests/test_import_graph.py)."""
