"""The adjudicator inside an lmms-eval run: scoring's seam asks it about each response the rules leave
unparsed, and it asks the judge with the question's images.

    export INVSCALE_ADJUDICATOR=postprocess.adjudication.live:adjudicate   # and run lmms-eval with --process_with_media
    export INVSCALE_ADJUDICATION_JUDGES=model_configs/adjudication_judges.yaml   # the judges file (required)
    export INVSCALE_ADJUDICATION_JUDGE=gpt-5.4          # which judge of the file (default: the first)
    export INVSCALE_ADJUDICATION_CACHE=/path/cache      # answer cache (default: ~/.cache/invscale/adjudication)
    export OPENAI_API_KEY=...                           # the variable the judge's api_key_env names

lmms-eval drops the image columns from the docs it scores unless it runs with `--process_with_media`
(which decodes every doc's images while scoring, so add it only with the adjudicator); without it every
judged answer fails with that named (hooks.scored_visuals).

One client and one cache per process, kept between calls, so the judge's rate limit holds across them
and a rerun asks nothing twice. A call never blocks for ever: the judge's timeout_s, max_retries and
parse_retries bound it. A call that fails, a configuration that cannot be used (no judges file, no key)
or a verdict that stays malformed leaves the answer unparsed with the reason in the record
(judge_status failed / unparsed, judge_error) and a warning in the run's log: the generations are never
lost to a judge, and `python -m postprocess adjudicate` can settle those answers afterwards.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lmms_eval_tasks.extraction import Extraction
from lmms_eval_tasks.question import DocError, Question
from lmms_eval_tasks.scoring import Images, Judgement
from postprocess.adjudication import is_judged
from postprocess.adjudication.prompt import judgement_of, request_for, verdict_parser

if TYPE_CHECKING:
    from invscale.judges import JudgeCache, JudgeConfig
    from invscale.judges.client import JudgeClient

log = logging.getLogger(__name__)

JUDGES_ENV = "INVSCALE_ADJUDICATION_JUDGES"
JUDGE_ENV = "INVSCALE_ADJUDICATION_JUDGE"
CACHE_ENV = "INVSCALE_ADJUDICATION_CACHE"
DEFAULT_CACHE = Path("~/.cache/invscale/adjudication")


@dataclass
class _Session:
    judge: JudgeConfig
    client: JudgeClient
    cache: JudgeCache


_session: _Session | None = None
_lock = threading.Lock()
_warned: set[str] = set()


def _open_session() -> _Session:
    from invscale.judges import JudgeConfigError, choose_judges
    from invscale.judges.batch import cache_for
    from invscale.judges.client import JudgeClient

    path = os.environ.get(JUDGES_ENV)
    if not path:
        raise JudgeConfigError(f"{JUDGES_ENV} is not set (it must name the adjudication judges file)")
    name = os.environ.get(JUDGE_ENV)
    chosen = choose_judges(path, [name] if name else [], named_by=JUDGE_ENV)
    cache_dir = Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE).expanduser()
    return _Session(chosen[0], JudgeClient(chosen[0]), cache_for(chosen[0], cache_dir))


def _warn(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("answer adjudication: %s (the answer stays unparsed; this message is not logged again)",
                    message)


def _png(images: Sequence) -> list[bytes]:
    from invscale.judges.client import image_bytes

    return [image_bytes(image) for image in images]


def adjudicate(question: Question, response: str, extraction: Extraction, images: Images) -> Judgement | None:
    """The seam's adjudicator (lmms_eval_tasks.scoring): the judge's reading of a response the rules left
    unparsed; None (not asked) for answers that are not judged (postprocess.adjudication.is_judged)."""
    global _session
    from invscale.judges import JudgeConfigError, JudgeError, ask_cached

    if not is_judged(question.benchmark, question.gold):
        return None
    with _lock:  # lmms-eval scores one response at a time; the lock only guards the first set-up
        try:
            _session = _session or _open_session()
        except JudgeConfigError as error:
            _warn(str(error))
            return Judgement(None, os.environ.get(JUDGE_ENV) or "unconfigured", "", None, "failed", str(error))
    session = _session
    try:
        request = request_for(question, response, _png(images()))
    except DocError as error:
        _warn(str(error))
        return Judgement(None, session.judge.name, session.judge.model, None, "failed", str(error))
    try:
        record = ask_cached(session.client, session.cache, request, verdict_parser(question))
    except JudgeError as error:
        _warn(str(error))
        return Judgement(None, session.judge.name, session.judge.model, None, "failed", str(error))
    return judgement_of(record, question)
