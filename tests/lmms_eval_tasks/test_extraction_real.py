"""The labelled real M3CoT responses (tests/lmms_eval_tasks/extraction_real, text from ../shared/data/m3cot): the
rules that commit are exactly those that meet the bar on the samples the rules were fitted to (extraction_bench.fitted:
every M3CoT sample, the long-prose and MathVista multiple-choice fitted samples), the rule table states their counts,
the targets of issue 17 hold there, two readers agree, the fitted figures are those recorded, and the label files keep
their format. Skips, saying so, where the data folder is absent."""

import json

import pytest
from scipy.stats import binomtest

from extraction_bench import fitted, real
from lmms_eval_tasks.extraction import COMMITTING_CHOICE_RULES, RULE_TIERS, RULES

needs_data = pytest.mark.skipif(not real.DATA_FOLDER.is_dir(), reason=f"no M3CoT data at {real.DATA_FOLDER}")
BAR = 0.999  # precision a rule must show on the fitted samples to commit
READING_SUPPORT = 20  # letters a reading rule needs there to show it


@pytest.fixture(scope="module")
def dev():
    """The M3CoT samples the rules were fitted to (real.FITTED: dev and the held-out rounds 1-12, each scored once and
    looked at since)."""
    return real.read_sample([label for name in real.FITTED for label in real.load_sample(name)])


@pytest.fixture(scope="module")
def fitted_samples():
    """Every sample the rules were fitted to (extraction_bench.fitted): M3CoT, the long-prose and MathVista MC ones."""
    return fitted.read_fitted()


@needs_data
def test_a_rule_commits_exactly_when_the_fitted_samples_do_not_show_it_below_the_bar(fitted_samples):
    rules = real.rule_table(fitted_samples)
    for rule, tier in RULE_TIERS.items():
        if rule not in rules.index or rules.loc[rule, "letters"] == 0:  # never reached on these samples
            assert rule not in COMMITTING_CHOICE_RULES or tier == "strict", rule
            continue
        row = rules.loc[rule]
        not_below = binomtest(int(row.letters - row.right), int(row.letters), 1 - BAR, alternative="greater").pvalue >= 0.05
        shown = not_below if tier == "strict" else not_below and row.letters >= READING_SUPPORT  # prose: on enough letters
        assert (rule in COMMITTING_CHOICE_RULES) == shown, (rule, row.to_dict())


@needs_data
def test_the_rule_table_states_what_the_fitted_samples_show(fitted_samples):
    rules = real.rule_table(fitted_samples)
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


# The round-11 and round-12 held-out samples were scored once each with the rules frozen at b613c10 (precision 998/999
# and 988/989; docs/extraction_precision.md keeps those figures). Issue 31's second long-prose fitting looked at them,
# so every M3CoT sample is fitted now: these are the rules' figures on all of them, and on rounds 11 and 12 (which the
# old figures are set beside in the docs). The held-out measure of the current rules is the long-prose and MathVista
# held-out samples (test_extraction_long_prose.py, test_extraction_mathvista.py).
FITTED_FIGURES = {"items": 17208, "given": 14519, "right": 14516, "committed": 15053, "non_answers": 2155, "withheld": 297}
ROUND_FIGURES = {
    "m3cot_heldout_round11": {"items": 1200, "given": 1011, "right": 1010, "committed": 1044, "non_answers": 156, "withheld": 17},
    "m3cot_heldout_round12": {"items": 1200, "given": 1007, "right": 1006, "committed": 1053, "non_answers": 147, "withheld": 22},
}


@needs_data
def test_the_fitted_figures_are_those_recorded(dev):
    totals = real.measures(dev)
    assert {key: totals[key] for key in FITTED_FIGURES} == FITTED_FIGURES
    assert totals["precision"] >= 0.9995 and totals["abstention"] >= 0.99


@needs_data
@pytest.mark.parametrize("name", sorted(ROUND_FIGURES))
def test_the_former_held_out_rounds_read_as_recorded(name):
    totals = real.measures(real.read_sample(real.load_sample(name)))
    assert {key: totals[key] for key in ROUND_FIGURES[name]} == ROUND_FIGURES[name]
