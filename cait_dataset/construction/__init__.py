"""`cait-build`: the CAIT construction pipeline of "Seeing vs. Believing" (Section 3.2, Figure 3, Tables 1
and 19-22) as resumable stages over one working folder (files.py lists its files), each stage's output a
file a person can read and edit:

  verbs.py       verbs from VerbNet (nltk's reader) or a list, the four filtering principles per verb
  scenes.py      scene pairs from an LLM (Table 19)                     -> scenes.jsonl
  review.py      human review in Label Studio (Table 20)                -> review.csv
  describe.py    detailed scene descriptions from the LLM (Table 21)    -> descriptions.jsonl
  images.py      images from a pluggable generator (Table 22)           -> images.jsonl, images/
  generators.py  the generators: OpenAI-compatible images endpoint, Gemini (google-genai), local diffusers
  filtering.py   human image filtering toward Table 1's proportions     -> filter.csv
  assemble.py    the CAIT folder the tasks read                         -> cait/ (cait.jsonl + images/)
  runner.py      status, a run of every automatic stage, the dry run
  prompts.py     Tables 19, 21 and 22 verbatim (our completions marked); answers.py reads the LLM's answers
  command.py     the console script

Every LLM call goes through invscale.judges (cache, retries, rate limit, resume, strict parsing with
re-asks, dry-run estimate); the image generators share its retry and rate-limit code and keep their own
fsynced record. Heavy clients (openai, google-genai, diffusers, torch) are imported when used.
"""
