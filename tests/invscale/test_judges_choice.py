"""Judges are chosen by name in one place (invscale.judges.choose_judges): every judged command takes them so."""

import pytest

from invscale.judges import JudgeConfigError, choose_judges

JUDGES = """judges:
  - {name: first, provider: openai, model: m1}
  - {name: second, provider: anthropic, model: m2}
  - {name: third, provider: openai, model: m3}
"""


@pytest.fixture
def judges_file(tmp_path):
    path = tmp_path / "judges.yaml"
    path.write_text(JUDGES)
    return path


def test_no_names_choose_every_judge_in_the_file_order(judges_file):
    assert [judge.name for judge in choose_judges(judges_file)] == ["first", "second", "third"]


def test_names_choose_those_judges_in_the_file_order(judges_file):
    assert [judge.name for judge in choose_judges(judges_file, ["third", "first"])] == ["first", "third"]


def test_an_unknown_name_is_one_line_naming_the_file_the_name_its_source_and_the_judges(judges_file):
    with pytest.raises(JudgeConfigError) as error:
        choose_judges(judges_file, ["first", "fourth"], named_by="--llm")
    assert str(error.value) == f"{judges_file}: no judge named 'fourth' (--llm); judges: ['first', 'second', 'third']"
