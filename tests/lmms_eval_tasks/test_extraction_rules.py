"""The rule table (extraction.RULES): every rule the extractors name is in it once, with a tier that fits what it
does, an admission that follows its measured precision, and plain words for the explorer (`describe`). That the
measured counts are what the fitted samples show is checked on the data in test_extraction_real.py."""

import pytest
from scipy.stats import binomtest

from extraction_bench.synthetic import load_corpus, read_corpus
from lmms_eval_tasks.extraction import COMMITTING_CHOICE_RULES, READING, RULE_TIERS, RULES, STRICT, describe

BAR = 0.999  # precision a rule must show on the fitted samples to commit
READING_SUPPORT = 20  # letters a reading rule needs there to show it


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_has_a_tier_an_admission_and_plain_words(name):
    rule = RULES[name]
    assert rule.tier in (STRICT, READING, None)
    assert RULE_TIERS.get(name) == rule.tier and (name in COMMITTING_CHOICE_RULES) == rule.commits
    assert not rule.commits or rule.tier is not None, "only a rule that gives a prediction commits"
    if rule.letters:  # admission follows the measured precision (the comment above extraction.admission.RULES)
        not_below = binomtest(rule.letters - rule.right, rule.letters, 1 - BAR, alternative="greater").pvalue >= 0.05
        shown = not_below if rule.tier == STRICT else not_below and rule.letters >= READING_SUPPORT
        assert rule.commits == (shown and rule.tier is not None), (name, rule)
    said, unread = describe(name, "B"), describe(name, None)
    assert said and unread and "{" not in said + unread and "_" not in said + unread  # words, not a rule name
    if "{option}" in rule.says:
        assert "option B" in said and "option B" not in unread
        assert ("judge" in said) == (not rule.commits and rule.letters is not None)


def test_mention_with_text_letters_are_a_reading():
    assert RULES["mention_with_text"].tier == RULE_TIERS["mention_with_text"] == READING
    assert RULES["mention"].tier == READING


def test_describe_says_where_the_letter_was_read():
    assert describe("letter_line", "B") == "a line or sentence of its own names option B"
    assert describe("only_number", "3.5") == '"3.5" is the only number in the answer'
    assert describe("mention", "C").startswith("the conclusion names only option C: withheld for the judge (this rule's "
                                               "letter is right 68 of 77 times")


def test_an_unknown_rule_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'guessed'"):
        describe("guessed", "A")


def test_every_rule_the_extractors_name_on_the_corpus_is_in_the_table():
    assert set(read_corpus(load_corpus()).rule) <= set(RULES)
