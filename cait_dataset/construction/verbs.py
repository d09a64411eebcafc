"""Stage 1, the verb library (Section 3.2, "Verb Library Filtering"; Appendix A.1, Table 11).

Candidates come from VerbNet through nltk's VerbNet reader (every member verb of a class with a frame
whose subject is the Agent and whose object is a noun phrase: `Agent V <role>`, the automatic part of the
Agent-Action-Patient structure of principle 2) or from a list the user gives (a text file, one verb a line,
or a CSV with a `verb` column and any of the principle columns). They go to WORK/verbs.csv with the four
principles of the paper, one column each, yes / no / blank (not judged yet):

  semantic_consistency     the verb explicitly describes the action relationship between objects
  non_interchangeability   Agent-Action-Patient: swapping subject and object changes the scene's meaning
  static_recognizability   the action is discernible in a single static frame
  commonality              a high-frequency, general-purpose verb, no domain jargon

People judge them (the paper's authors did, Table 11); `--principles-met` records a given list as already
filtered (e.g. the paper's 318-verb library). The library is the verbs with all four yes. Rerunning merges:
rows already in the file are kept as edited; only blank cells are filled and new verbs appended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .files import VERBS, YES, BuildError, read_csv, read_keyed_csv, write_csv, yes_no

PRINCIPLES = ("semantic_consistency", "non_interchangeability", "static_recognizability", "commonality")
COLUMNS = ["verb", "source", "verbnet_classes", "agent_frames", *PRINCIPLES, "note"]
VERB_PATTERN = re.compile(r"[a-z][a-z' -]*[a-z]|[a-z]")  # "chase", "play with", "spoon-feed"
VERBNET_FILES = r"(?!\.).*\.xml"  # nltk's pattern for the VerbNet corpus files


@dataclass
class VerbCandidate:
    verb: str
    source: str
    verbnet_classes: str = ""
    agent_frames: str = ""
    principles: dict[str, str] = field(default_factory=dict)  # principle -> yes / no
    note: str = ""


def normal_verb(text: str, where: str) -> str:
    verb = " ".join(str(text).strip().lower().replace("_", " ").split())
    if not VERB_PATTERN.fullmatch(verb):
        raise BuildError(f"{where}: {text!r} is not a verb (letters, spaces, hyphens and apostrophes only)")
    return verb


def _agent_frames(reader, classid: str, known: set[str]) -> list[str]:
    """`Agent V <role>` for each frame of the class and the classes above it (subclass members inherit)."""
    found = []
    while True:
        for frame in reader.frames(classid):
            syntax = frame["syntax"]
            if len(syntax) >= 3 and [s["pos_tag"] for s in syntax[:3]] == ["NP", "VERB", "NP"] \
                    and syntax[0]["modifiers"]["value"] == "Agent" and syntax[2]["modifiers"]["value"]:
                found.append(f"Agent V {syntax[2]['modifiers']['value']}")
        parent = classid.rsplit("-", 1)[0]
        if parent == classid or parent not in known:
            return found
        classid = parent


def verbnet_candidates(root: Path | None = None) -> tuple[list[VerbCandidate], int]:
    """(candidates, verbs left out for having no `Agent V NP` frame) from the VerbNet corpus at `root`
    (default: nltk's installed `verbnet` corpus)."""
    import nltk
    from nltk.corpus.reader import VerbnetCorpusReader

    if root is None:
        try:
            root = Path(nltk.data.find("corpora/verbnet"))
        except LookupError:
            raise BuildError("nltk's VerbNet corpus is not installed (python -m nltk.downloader verbnet), "
                             "or give its folder (--verbnet DIR) or your own verb list (--verbs FILE)") from None
    root = Path(root).resolve()
    if not root.is_dir() or not any(root.glob("*.xml")):
        raise BuildError(f"{root}: no VerbNet class files (*.xml)")
    # nltk (3.10 on) reads corpora only under its data path: the folder named here is added while it is read
    added = str(root) not in nltk.data.path
    if added:
        nltk.data.path.append(str(root))
    try:
        reader = VerbnetCorpusReader(str(root), VERBNET_FILES)
        known = set(reader.classids())
        candidates, left_out = [], 0
        for lemma in reader.lemmas():
            classes = sorted(reader.classids(lemma=lemma))
            frames = sorted({frame for classid in classes for frame in _agent_frames(reader, classid, known)})
            if not frames:
                left_out += 1
                continue
            candidates.append(VerbCandidate(normal_verb(lemma, f"VerbNet member {lemma!r}"), "verbnet",
                                            ";".join(classes), ";".join(frames)))
    finally:
        if added:
            nltk.data.path.remove(str(root))
    return candidates, left_out


def listed_verbs(path: Path, principles_met: bool = False) -> list[VerbCandidate]:
    """The verbs of a text file (one a line; blank lines and lines starting with # skipped) or of a CSV
    with a `verb` column and optionally principle columns and a note. With `principles_met`, every
    principle the file leaves blank is recorded as yes (the list is an already filtered library)."""
    path = Path(path)
    if not path.is_file():
        raise BuildError(f"{path}: no such verb list")
    source = f"list:{path.name}"
    if path.suffix.lower() == ".csv":
        frame = read_csv(path, ["verb"])
        rows = [(f"{path}:{row['line']}", row) for row in frame.to_dict("records")]
    else:
        rows = [(f"{path}:{number}", {"verb": text}) for number, text in
                enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text.strip() and not text.lstrip().startswith("#")]
    candidates = []
    for where, row in rows:
        principles = {name: yes_no(row.get(name), f"{where}: field '{name}'") for name in PRINCIPLES}
        if principles_met:
            principles = {name: value or YES for name, value in principles.items()}
        candidates.append(VerbCandidate(normal_verb(row["verb"], f"{where}: field 'verb'"), source,
                                        principles={k: v for k, v in principles.items() if v},
                                        note="principles met per the given list" if principles_met else
                                        str(row.get("note") or "")))
    return candidates


def read_verbs(work: Path) -> pd.DataFrame:
    """WORK/verbs.csv checked: unique verbs, principle cells yes / no / blank (normalised)."""
    path = Path(work) / VERBS
    frame = read_keyed_csv(path, COLUMNS, "verb", normal_verb)
    for index, row in frame.iterrows():
        where = f"{path}:{row['line']}"
        for name in PRINCIPLES:
            frame.at[index, name] = yes_no(row[name], f"{where}: field '{name}'")
    return frame


def library(verbs: pd.DataFrame) -> list[str]:
    """The verbs with all four principles judged yes, in file order."""
    return verbs.loc[(verbs[list(PRINCIPLES)] == YES).all(axis=1), "verb"].tolist()


@dataclass(frozen=True)
class VerbsUpdate:
    added: int
    filled: int  # existing rows with blank cells filled from the new candidates
    total: int
    library: int
    unjudged: int  # verbs with a principle not judged yet


def update_verbs(work: Path, candidates: Iterable[VerbCandidate]) -> VerbsUpdate:
    """Merge candidates into WORK/verbs.csv (see the module docstring)."""
    verbs = read_verbs(work).drop(columns="line")
    rows = {row["verb"]: row for row in verbs.to_dict("records")}
    added = filled = 0
    for candidate in candidates:
        values = {"verb": candidate.verb, "source": candidate.source, "verbnet_classes": candidate.verbnet_classes,
                  "agent_frames": candidate.agent_frames, **candidate.principles, "note": candidate.note}
        if candidate.verb not in rows:
            rows[candidate.verb] = {column: values.get(column, "") for column in COLUMNS}
            added += 1
            continue
        row = rows[candidate.verb]
        blanks = [column for column in COLUMNS if not row[column] and values.get(column)]
        for column in blanks:
            row[column] = values[column]
        filled += bool(blanks)
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    write_csv(frame, Path(work) / VERBS, COLUMNS)
    unjudged = int((frame[list(PRINCIPLES)] == "").any(axis=1).sum())
    return VerbsUpdate(added, filled, len(frame), len(library(frame)), unjudged)
