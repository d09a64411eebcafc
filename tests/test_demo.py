"""The demo's per-model progress: read from lmms-eval's own answer bar in the run's log."""

from invscale_demo.demo import answered


def test_the_last_answer_count_in_the_log_is_the_progress():
    tail = ("Generating test split: 72 examples [00:00, 9492.06 examples/s]\n"
            "Model Responding:   0%|          | 0/153 [00:00<?, ?it/s]\r"
            "Model Responding:   1%|          | 1/153 [00:01<04:21,  1.72s/it]\r"
            "Model Responding:  41%|████      | 62/153 [01:01<01:25,  1.06it/s]").encode()
    assert answered(tail) == (62, 153)
    assert answered(b"Loading weights: 100%|##########| 53/53 [00:00<00:00]\n") is None
