"""The labelled corpus (tests/lmms_eval_tasks/extraction_corpus): every response is read as a careful person reads
it, the targets of issue 9 hold on the whole, and four plausible regressions of the extractor are caught by it."""

import json
import re
from collections import Counter

import pytest

from lmms_eval_tasks import extraction
from lmms_eval_tasks.extraction import choice, locate, open_answers, options
from extraction_bench.synthetic import (
    CorpusError,
    extract_item,
    load_corpus,
    read_corpus,
    rule_table,
    same_answer,
    scorecard,
    totals,
)

CORPUS = load_corpus()


def letter_read(read):
    """The answer the rules read: committed, or withheld as `inconclusive` because its rule does not commit."""
    return read.candidate if read.reason == "inconclusive" else read.prediction


@pytest.mark.parametrize("item", CORPUS, ids=[item.id for item in CORPUS])
def test_every_response_is_read_as_labelled(item):
    read = extract_item(item)
    if item.known_miss:  # allowed to miss, never to give another answer
        assert read.prediction is None or same_answer(item, read.prediction), item.known_miss
    elif item.committed:  # read, or withheld for the judge by a rule below 99.9% on real text: never another answer
        assert same_answer(item, letter_read(read)), (read.prediction, read.rule, read.reason, read.candidate)
    else:
        assert (read.prediction, read.reason) == (None, item.reason), read.rule


def test_the_targets_hold_on_the_corpus():
    read = read_corpus(CORPUS)
    t = totals(read)
    assert t["precision"] >= 0.998  # of the answers given
    # the corpus is written in the prose shapes the reading rules interpret, most of which do not commit on real
    # text (extraction.COMMITTING_CHOICE_RULES): a quarter of its answers go to the judge, with the right candidate
    assert t["coverage"] >= 0.71  # of the committed answers (measured 71.7%)
    committed = read[read.committed]
    assert (committed.right | committed.withheld_right).mean() >= 0.95  # read or withheld with the right letter
    assert t["abstention"] >= 0.95  # of the non-answers


def test_the_corpus_spans_the_styles_vlms_write():
    assert len(CORPUS) >= 600
    assert {item.kind for item in CORPUS} == {"mcq", "yes_no", "numeric", "open"}
    assert {len(item.options) for item in CORPUS if item.kind == "mcq"} >= set(range(2, 11))
    reasons = Counter(item.reason for item in CORPUS if not item.committed)
    # `inconclusive` says which rule read the text, not what the text is: no label has it
    assert all(reasons[r] >= 5 for r in extraction.ABSTAIN_REASONS if r != "inconclusive"), reasons
    styles = {item.style for item in CORPUS}
    for style in ("bare_letter", "letter_text", "markdown", "cot_answer_line", "cot_statement", "self_correction",
                  "self_contradiction", "refusal", "hedge_letters", "option_echo", "multi_select", "boxed",
                  "option_text_labels", "own_image_labels", "pronoun_nine_options", "lower_case_bracket", "cait_cot"):
        assert style in styles, style


def test_a_malformed_line_is_named(tmp_path):
    good = {"id": "x/1", "kind": "mcq", "options": ["a", "b"], "response": "A", "expected": "A", "reason": None,
            "style": "bare_letter"}
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "x/2", "expected": "C"}) + "\n")
    with pytest.raises(CorpusError, match=r"a\.jsonl:2: field 'expected' 'C' is not one of the option letters"):
        load_corpus(tmp_path)
    (tmp_path / "a.jsonl").write_text(json.dumps({**good, "reason": "hedge"}) + "\n")
    with pytest.raises(CorpusError, match=r"a\.jsonl:1: exactly one of fields 'expected' and 'reason'"):
        load_corpus(tmp_path)
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(CorpusError, match=r"a\.jsonl:2: field 'id' 'x/1' repeats"):
        load_corpus(tmp_path)


def test_the_scorecard_reports_every_rule_and_reason():
    read = read_corpus(CORPUS)
    card = scorecard(read)
    for rule in read[read.given].rule.unique():
        assert f"| {rule} " in card
    for reason in read[~read.given].reason.unique():
        assert f"| {reason} " in card
    overall = rule_table(read).loc["overall"]
    assert overall.given == read.given.sum() and overall.right == read.right.sum()


# ---------------------------------------------------------------- the corpus catches these regressions

def _agrees(item) -> bool:
    read = extract_item(item)
    return same_answer(item, letter_read(read)) if item.committed else (read.prediction, read.reason) == (None, item.reason)


def _regressions() -> set[str]:
    return {item.id for item in CORPUS if not item.known_miss and not _agrees(item)}


def test_the_first_answer_statement_winning_over_a_correction_is_caught(monkeypatch):
    settle = locate._settle

    def first_wins(text, commitments, match_of):
        return settle(text, sorted(commitments, key=lambda c: (c.start, c.priority))[:1], match_of)

    for reader in (choice, open_answers):  # multiple choice and yes/no settle their commitments alike
        monkeypatch.setattr(reader, "_settle", first_wins)
    assert {"cot/organelle/25", "cot/organelle/26", "cot/r2_sim/10", "yes_no_numeric/mme/23"} <= _regressions()


def test_the_option_text_rule_running_before_the_mention_rule_is_caught(monkeypatch):
    without_commitment = choice._Reader.without_commitment

    def text_first(reader):
        start, end = reader.conclusion()
        named = {letter for letter, _, _ in reader.option_occurrences(start, end)}
        if len(named) == 1:
            return extraction.Extraction(named.pop(), "option_text", "option_text")
        if named:
            return extraction.abstain("option_text", reader.several_reason(start, end, named, by_letter=False))
        return without_commitment(reader)

    monkeypatch.setattr(choice._Reader, "without_commitment", text_first)
    assert {"direct/shapes/08", "direct/mention_vs_text/03", "multi_image/mention_vs_text/02"} <= _regressions()


def test_lower_case_bracketed_letters_no_longer_read_is_caught(monkeypatch):
    upper_only = extraction.LETTER.pattern.replace(r"(?<![A-Za-z]\()[a-z]|[A-Z]", r"[A-Z]")
    assert upper_only != extraction.LETTER.pattern
    monkeypatch.setattr(options, "LETTER", re.compile(upper_only))
    for reader in (options, locate):  # nor "b"
        monkeypatch.setattr(reader, "LOWER_LETTER", re.compile(r"\s*(?!)(?:\(([a-z])\))?([a-z])\s*[.:)]?\s*"))
    monkeypatch.setattr(locate, "LAST_LOWER_LETTER", re.compile(r"(?!)"))  # nor a last "(b)"
    assert {"direct/organelle/08", "direct/organelle/40", "direct/foodweb/09"} <= _regressions()


def test_the_pronoun_i_read_as_option_i_is_caught(monkeypatch):
    monkeypatch.setattr(options, "ARTICLE_OR_PRONOUN", ("A",))
    assert {"direct/emotions9/01", "direct/emotions9/16", "direct/prices10/11"} <= _regressions()
