"""The ground floor: services the analysis (postprocess), the CAIT builder (cait_dataset) and launch all use. It
imports no other part of the project (the `invscale` command is on the top floor, invscale_cli/).

  judges/          the one LLM judge client: config, cache, retries, rate limit, resume, batches
  label_studio.py  the Label Studio client: task sets, projects, exports
  quotas.py        whole-number quotas from shares (largest remainder)
  options.py       options spelled once (--tasks-dir)
"""
