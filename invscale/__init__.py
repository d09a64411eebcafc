"""The ground floor: services the analysis (postprocess), the CAIT builder (cait_dataset) and launch all use,
and the `invscale` console command.

  judges/          the one LLM judge client: config, cache, retries, rate limit, resume, batches
  label_studio.py  the Label Studio client: task sets, projects, exports
  quotas.py        whole-number quotas from shares (largest remainder)
  cli.py           the `invscale` command, one front door over the project's commands
"""
