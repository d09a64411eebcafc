"""The one LLM-judge client of the project, for every judged use (CAIT re-evaluation, adjudicating
answers extraction cannot settle, the error taxonomy, CAIT construction): configuration (config.py),
the answer cache (cache.py), the endpoint client with retries and rate limit (client.py), and running
many requests over several judges with resume and a dry-run estimate (batch.py)."""

from invscale.judges.batch import (CallEstimate, JudgeRun, ask_cached, estimate_calls, parse_error, progress_printer,
                                   run_judges)
from invscale.judges.cache import JudgeCache
from invscale.judges.config import (JudgeConfig, JudgeConfigError, JudgeError, JudgeRequest, choose_judges,
                                    load_judges)

__all__ = ["CallEstimate", "JudgeCache", "JudgeConfig", "JudgeConfigError", "JudgeError", "JudgeRequest", "JudgeRun",
           "ask_cached", "choose_judges", "estimate_calls", "load_judges", "parse_error", "progress_printer", "run_judges"]
