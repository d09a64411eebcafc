"""What exercises the project rather than ships in it: the demo (demo.py), the fixture datasets of every
benchmark and a CAIT folder (fixtures.py), and tiny random-weight models of every family (tiny_models.py)."""
