"""Human annotation through Label Studio: the task sets (task_sets), the agreement and baseline statistics
(agreement); the human-* commands are postprocess/cli/human.py. The Label Studio client (server and export
files) is the ground-floor invscale/label_studio.py, which the CAIT builder uses too."""
