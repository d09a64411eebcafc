"""Normalise: the text a reader looks at -- reasoning blocks, LaTeX, markdown and a copy of the option list removed."""

from __future__ import annotations

import functools
import re
import unicodedata

THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
UNCLOSED_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)
BOXED_START = re.compile(r"\\boxed\s*\{")
BOX_OPEN, BOX_CLOSE = "\u27e6", "\u27e7"  # \boxed{X} becomes ⟦X⟧, an answer statement
LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
LATEX_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
LATEX_DELIMITER = re.compile(r"\$+|\\[()\[\],;! ]|\\[a-zA-Z]+")
BOLD_LETTER = re.compile(r"(\*\*|__)[ \t]*\(?([A-Za-z])\)?[ \t]*\1")  # "**B**" is written as an option label: "(B)"
EMPHASIS = re.compile(r"\*\*|__|`+|(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])")
LINE_DECORATION = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*•][ \t]+)", re.MULTILINE)
# Drawing code a response embeds ("[asy] pair A,B; draw(A--B); [/asy]", bard's MathVista geometry): a figure, not words.
DRAWING_CODE = re.compile(r"\[asy\].*?(?:\[/asy\]|\Z)", re.IGNORECASE | re.DOTALL)
SPECIAL_TOKENS = re.compile(r"<\|[a-z_]{2,20}\|>|</?s>|<br\s*/?>|<(?:end_of_turn|start_of_turn|eos|bos|pad|unk)>", re.IGNORECASE)
CJK_BEFORE_LATIN = re.compile(r"([\u3400-\u9fff])(?=[A-Za-z0-9(])")
# A line that opens a new question or a new turn ends the response's own answer: few-shot prompts make some models
# go on with questions and solutions of their own ("The answer is (B) decrease.\n\nQuestion: If all the water fleas
# die ...\nAnswer: (A) decrease."), or play the next turn ("Human: Hint: ..."). Not on the first line.
CONTINUATION = re.compile(r"\n[ \t*#>]*(?:Question|Hint|Human)[ \t*]*:")
# Closing courtesies after the answer ("I hope this helps! Let me know if you have any other questions."): they end
# the response's own words, and a reader of its last sentences must not take them for the conclusion.
COURTESY_SENTENCE = re.compile(r"(?im)(?:(?<=[.!?])[ \t]+|^[ \t]*)(?:is\s+there\s+anything|i\s+hope\s+this|hope\s+this\s+helps|"
                               r"let\s+me\s+know\s+if|please\s+let\s+me\s+know|feel\s+free\s+to|"
                               r"do\s+you\s+have\s+(?:any\s+)?(?:other|more|further|additional)\s+questions|"
                               r"do\s+you\s+want\s+(?:me\s+)?to\s+(?:try|see|solve|do)\s+(?:another|other|more))\b")
COURTESY_WORDS = 40  # a courtesy followed by more than this is no closing
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def strip_reasoning(response: str) -> str:
    """Drop <think>...</think> blocks; a dangling </think> ends the reasoning, an unclosed <think> is all reasoning."""
    text = THINK_BLOCK.sub(" ", response)
    if re.search(r"</think>", text, re.IGNORECASE):
        text = re.split(r"</think>", text, flags=re.IGNORECASE)[-1]
    text = UNCLOSED_THINK.sub(" ", text)
    return text.strip()


def without_continuation(text: str) -> str:
    """The text up to a later line that opens a new question or turn ("Question: ...", "Hint: ...", "Human: ..."):
    what follows is a continuation of the prompt's examples, not this question's answer."""
    continuation = CONTINUATION.search(text)
    return text[: continuation.start()] if continuation and text[: continuation.start()].strip() else text


def boxed_marked(text: str) -> str:
    """Every \\boxed{...} written as ⟦...⟧, its braces matched at any depth ("\\boxed{\\text{(D) }\\frac{2\\sqrt{5}}{5}}");
    one never closed is left as it is."""
    out, pos = [], 0
    for m in BOXED_START.finditer(text):
        if m.start() < pos:
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            continue
        out += [text[pos : m.start()], BOX_OPEN, text[m.end() : i - 1], BOX_CLOSE]
        pos = i
    return "".join(out) + text[pos:]


def without_courtesy(text: str) -> str:
    """The text before its closing courtesies ("I hope this helps! Let me know if ..."): the first courtesy sentence
    after which at most COURTESY_WORDS words follow; the text itself when it is only courtesy."""
    for courtesy in COURTESY_SENTENCE.finditer(text):
        if len(text[courtesy.start() :].split()) <= COURTESY_WORDS:
            return text[: courtesy.start()].rstrip() if text[: courtesy.start()].strip() else text
    return text


@functools.lru_cache(maxsize=128)  # the readers of one response (letters, numbers, guards) each prepare it
def prepare(response: str) -> str:
    """The response without reasoning blocks and drawing code ("[asy] ... [/asy]"), without a continuation of new questions (`without_continuation`) and
    without closing courtesies (`without_courtesy`),
    full-width forms folded ("（Ｂ）" is "(B)"), LaTeX wrappers,
    markdown emphasis and line decoration (headings, bullets, quotes) removed, curly quotes made straight;
    a bold letter ("**B**") becomes a bracketed one, and a Chinese character is spaced from a Latin letter, digit
    or bracket after it ("答案为D" is "答案为 D")."""
    text = SPECIAL_TOKENS.sub(" ", unicodedata.normalize("NFKC", strip_reasoning(response)).translate(QUOTES))
    text = DRAWING_CODE.sub(" ", text)
    text = without_courtesy(without_continuation(text))
    text = LATEX_FRACTION.sub(r"(\1)/(\2)", text)
    text = boxed_marked(text)
    for _ in range(2):  # \text{\textbf{B}}
        text = LATEX_WRAPPER.sub(r"\1", text)
    text = LATEX_DELIMITER.sub(" ", text)
    text = EMPHASIS.sub("", BOLD_LETTER.sub(r"(\2)", text))
    text = CJK_BEFORE_LATIN.sub(r"\1 ", text)  # "答案选项为D": the letter stands alone, as after a space
    return LINE_DECORATION.sub("", text).strip()


FINAL_ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def final_answer_segment(text: str) -> str | None:
    """The text after the last 'Answer:' line (the CoT format), if any."""
    matches = FINAL_ANSWER_LINE.findall(text)
    return matches[-1] if matches else None


def normalise_text(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s%.-]", " ", text.lower())).strip(" .")


OPTION_ITEM_LINE = re.compile(r"^[ \t]*[(\[]?([A-H])[)\].:][ \t]+(\S[^\n]*)$", re.MULTILINE)
ANSWERED = re.compile(r"(?im)^[ \t]*(?:final\s+)?answer\s*[:：]|\bthe\s+(?:correct\s+|final\s+)?answer\s+is\b")


def without_invented_questions(text: str, options: list[str], letters: list[str]) -> str:
    """The text before a question the response makes up after answering: a list of options of its own ("(A) 100 sq.
    feet\n(B) 200 sq. feet") -- lettered from A, none of them the prompt's -- after an answer ("Answer: C"); the
    response is cut at the line that asks it (a few-shot continuation with no "Question:" marker)."""
    shown = {letter: " ".join(option.split()).lower().rstrip(".") for letter, option in zip(letters, options)}
    items = list(OPTION_ITEM_LINE.finditer(text))
    for i, item in enumerate(items):
        if item.group(1) != "A" or i + 1 >= len(items) or items[i + 1].group(1) != "B" \
                or text[item.end() : items[i + 1].start()].strip():
            continue  # a list starts with (A) and goes on with (B) on the next line
        if all(" ".join(m.group(2).split()).lower().rstrip(".") == shown.get(m.group(1)) for m in items[i : i + 2]):
            continue  # the prompt's own options
        before = text[: item.start()].rstrip()
        question_start = before.rfind("\n") + 1  # the line that asks the made-up question
        if not ANSWERED.search(text, 0, question_start) or before.endswith(":"):
            return text  # the response never answered before it (it answers made-up questions only), or the list is
        return text[:question_start].rstrip()  # what "The correct answer is:" introduces
    return text


ECHO_GAP = re.compile(r"[ \t,;.|]*")
ECHO_ITEM = re.compile(r"[(\[]([A-Za-z])[)\]][ \t]*")


def _words_end(text: str, words: str) -> int | None:
    """Where `words` (joined by single spaces) end at the start of `text`, whatever spaces or tabs stand between them."""
    pos = 0
    for i, word in enumerate(words.split(" ")):
        if i:
            spaces = len(text) - len(text[pos:].lstrip(" \t")) - pos
            if not spaces:
                return None
            pos += spaces
        if not text.startswith(word, pos):
            return None
        pos += len(word)
    return pos


def without_option_echo(text: str, options: list[str], letters: list[str]) -> str:
    """The text with a copy of the option list on one line blanked ("[Choices] (A) 7 (B) 5 (C) 1 Answer: 1"): every
    option's letter with its own text, one after the other, is the prompt repeated, not an answer, and the trigger
    words inside ("(A) the answer is option D") state nothing; a copy may stop early where the text stops, its last
    item cut short. Some options only, with text after them, are several answers, not a copy. A text that
    is only the list is kept (it is read as the options listed). `options`: as `prepare` leaves them."""
    shown = {letter: " ".join(option.split()) for letter, option in zip(letters, options) if option.strip()}
    items = []
    for m in ECHO_ITEM.finditer(text):
        letter = m.group(1).upper()
        option = shown.get(letter)
        if option is None:
            continue
        line_end = text.find("\n", m.end())
        rest = text[m.end() : len(text) if line_end < 0 else line_end]
        if (end := _words_end(rest, option)) is not None:
            items.append((m.start(), m.end() + end, letter))
        elif len(rest.strip()) >= 3 and option.startswith(" ".join(rest.split())) and not text[m.end() + len(rest) :].strip():
            items.append((m.start(), m.end() + len(rest), letter))  # the last item, cut short
    runs, run = [], []
    for item in items:
        if run and not (item[0] >= run[-1][1] and ECHO_GAP.fullmatch(text, run[-1][1], item[0])):
            runs.append(run)
            run = []
        run.append(item)
    runs.append(run)
    blanked = text
    for run in filter(None, runs):
        listed = {letter for _, _, letter in run}
        whole = listed >= set(shown) or not text[run[-1][1] :].strip()  # every option, or up to where the text stops
        if len(listed) >= 2 and whole:  # not "the answer is (A) 6, (B) 4, and (C) 7": several answers
            start, end = run[0][0], run[-1][1]
            blanked = blanked[:start] + " " * (end - start) + blanked[end:]
    return blanked if re.search(r"\w", blanked) else text
