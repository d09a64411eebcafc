"""The labelled real M3CoT responses (tests/lmms_eval_tasks/extraction_real, text from ../shared/data/m3cot): the
rules that commit are exactly those that meet the bar on the samples the rules were fitted to (dev and the held-outs
of rounds 1-10, looked at since), the targets of issue 17 hold there, two readers agree, the round-11 and -12 held-out
figures are those recorded when it was scored once, and the label files keep their format. Skips, saying so, where
the data folder is absent."""

import json

import pytest
from scipy.stats import binomtest

from extraction_bench import real
from lmms_eval_tasks.extraction import COMMITTING_CHOICE_RULES, RULE_TIERS, RULES

needs_data = pytest.mark.skipif(not real.DATA_FOLDER.is_dir(), reason=f"no M3CoT data at {real.DATA_FOLDER}")
BAR = 0.999  # precision a rule must show on the fitted samples to commit
READING_SUPPORT = 20  # letters a reading rule needs there to show it


@pytest.fixture(scope="module")
def dev():
    """The samples the rules were fitted to (real.FITTED): the 3,000 dev items and the held-out samples of rounds 1-10
    (1,008 and 9 x 1,200 items), each scored once and looked at since."""
    return real.read_sample([label for name in real.FITTED for label in real.load_sample(name)])


@needs_data
def test_a_rule_commits_exactly_when_the_dev_sample_shows_it_precise(dev):
    rules = real.rule_table(dev)
    for rule, tier in RULE_TIERS.items():
        if rule not in rules.index or rules.loc[rule, "letters"] == 0:  # never reached on this sample
            assert rule not in COMMITTING_CHOICE_RULES or tier == "strict", rule
            continue
        row = rules.loc[rule]
        if tier == "strict":  # a stated letter: withheld only where its errors show it below the bar
            shown = binomtest(int(row.letters - row.right), int(row.letters), 1 - BAR, alternative="greater").pvalue >= 0.05
        else:  # prose read: it must show the bar
            shown = row.precision >= BAR and row.letters >= READING_SUPPORT
        assert (rule in COMMITTING_CHOICE_RULES) == shown, (rule, row.to_dict())


@needs_data
def test_the_rule_table_states_what_the_fitted_samples_show(dev):
    rules = real.rule_table(dev)
    assert set(rules.index) <= set(RULES)
    for name, rule in RULES.items():  # every entry: a rule not reached there found no letter
        measured = (int(rules.loc[name, "letters"]), int(rules.loc[name, "right"])) if name in rules.index else (0, 0)
        assert (rule.letters, rule.right) == (measured if rule.letters is not None else (None, None)), (name, measured)
        assert rule.letters is not None or measured == (0, 0), name


@needs_data
def test_the_targets_hold_on_the_dev_sample(dev):
    totals = real.measures(dev)
    assert totals["precision"] >= 0.999  # of the letters committed
    assert totals["abstention"] >= 0.97  # of the non-answers
    by_prompt = real.group_table(dev, "prompt")
    assert by_prompt.loc["direct", "coverage"] >= 0.95
    assert by_prompt.loc["two-turn", "coverage"] >= 0.90


@needs_data
def test_the_sample_spans_every_model_and_style_file(dev):
    files = {path.name.removesuffix(".jsonl.gz") for path in real.DATA_FOLDER.glob("*.jsonl.gz")}
    assert set(dev.id.str.split("/").str[0]) == files
    assert dev.groupby(dev.id.str.split("/").str[0]).size().min() >= 100


@pytest.mark.parametrize("first, second, size", [("m3cot_dev", "m3cot_agreement", 500),
                                                  ("m3cot_heldout_round2", "m3cot_agreement_round2", 200),
                                                  ("m3cot_heldout_round3", "m3cot_agreement_round3", 200),
                                                  ("m3cot_heldout_round4", "m3cot_agreement_round4", 200),
                                                  ("m3cot_heldout_round5", "m3cot_agreement_round5", 200),
                                                  ("m3cot_heldout_round6", "m3cot_agreement_round6", 200),
                                                  ("m3cot_heldout_round7", "m3cot_agreement_round7", 200),
                                                  ("m3cot_heldout_round8", "m3cot_agreement_round8", 200),
                                                  ("m3cot_heldout_round9", "m3cot_agreement_round9", 200),
                                                  ("m3cot_heldout_round10", "m3cot_agreement_round10", 200),
                                                  ("m3cot_heldout_round11", "m3cot_agreement_round11", 200),
                                                  ("m3cot_heldout_round12", "m3cot_agreement_round12", 200)])
def test_two_readers_agree_on_the_letters(first, second, size):
    first_labels = {(label.file, label.id): label for label in real.load_sample(first)}
    again = real.load_sample(second)
    agree = sum(first_labels[(label.file, label.id)].expected == label.expected for label in again)
    assert len(again) == size and agree / len(again) >= 0.99


@needs_data
def test_a_withheld_letter_keeps_its_candidate_and_no_tier(dev):
    withheld = dev[dev.reason == "inconclusive"]
    assert len(withheld) and withheld.candidate.notna().all() and withheld.tier.isna().all()
    assert dev[dev.given].tier.isin(["strict", "reading"]).all()


def test_the_label_files_keep_their_format():
    for name in (*real.SAMPLES, "m3cot_agreement", *(f"m3cot_agreement_round{k}" for k in range(2, 13))):
        path = real.LABELS_FOLDER / f"{name}.jsonl"
        if path.exists():
            assert real.load_labels(path)


def test_a_malformed_label_line_is_named(tmp_path):
    good = {"file": "gemini__cot", "id": "physics-1", "expected": "B", "reason": None, "note": None}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "physics-2", "reason": "hedge"}) + "\n")
    with pytest.raises(real.LabelError, match=r"s\.jsonl:2: exactly one of fields 'expected' and 'reason'"):
        real.load_labels(path)
    path.write_text(json.dumps({**good, "expected": None, "reason": "inconclusive"}) + "\n")
    with pytest.raises(real.LabelError, match=r"s\.jsonl:1: field 'reason' is 'inconclusive'"):
        real.load_labels(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(real.LabelError, match=r"s\.jsonl:2: fields 'file', 'id'"):
        real.load_labels(path)
    path.write_text(json.dumps({**good, "file": "gemini-cot"}) + "\n")
    with pytest.raises(real.LabelError, match=r"s\.jsonl:1: field 'file'"):
        real.load_labels(path)


# The round-11 and round-12 held-out samples were opened once each, after the rules were frozen (commit b613c10; round 12
# was drawn and labelled after round 11 was scored, the rules unchanged), and scored; these are their figures
# (docs/extraction_precision.md): precision 998/999 and 988/989, 1,986/1,988 = 99.90% together (target 99.9%: met,
# Wilson 99.63-99.97%); non-answers that abstain 155/156 and 146/147 (target 97%: met); coverage 97.50% and 95.47%
# direct, 94.59% and 92.92% two-turn (targets 95% and 90%: met). A change to the rules changes them: the samples are then
# no longer held out (they join real.FITTED) and a fresh one is needed (scripts/draw_extraction_sample.py).
# Since then one rule changed, fitted on real.FITTED only: `closing_text` (issue 31) commits 3 and 6 more letters
# there, all right (1,001/1,002 and 994/995; withheld 26 -> 23 and 34 -> 28). For that rule these samples are no
# longer untouched: the next held-out sample measures it.
# Issue 31 item 4 (long prose, fitted on real.FITTED and the long-prose dev sample only) commits 2 more letters on each,
# all right (1,003/1,004 and 996/997; withheld 23 -> 21 and 28 -> 26): for those rules too these samples are no longer
# untouched, and the long-prose held-out sample (test_extraction_long_prose.py) measures them.
HELD_OUT_FIGURES = {
    "m3cot_heldout_round11": {"items": 1200, "given": 1004, "right": 1003, "committed": 1044, "non_answers": 156, "withheld": 21},
    "m3cot_heldout_round12": {"items": 1200, "given": 997, "right": 996, "committed": 1053, "non_answers": 147, "withheld": 26},
}


@needs_data
@pytest.mark.parametrize("name", real.HELD_OUT)
def test_the_held_out_figures_are_those_recorded(name):
    totals = real.measures(real.read_sample(real.load_sample(name)))
    assert {key: totals[key] for key in HELD_OUT_FIGURES[name]} == HELD_OUT_FIGURES[name]
