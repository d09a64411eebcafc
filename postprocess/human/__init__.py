"""Human annotation through Label Studio: the task sets (task_sets), the server and export-file client
(label_studio), the agreement and baseline statistics (agreement) and the human-* commands (cli)."""
