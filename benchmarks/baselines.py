"""Run time of each automatic baseline on generated reports.

    python -m benchmarks.baselines [--runs 3] [--requests 10] [--sentences 10] [--refs 2] [--nuggets 5]
                                   [--extractive DIR]

Prints, per baseline, the seconds taken and reports/second (reports = runs x requests; gold reports are
extra). The EXAM reader's model load is timed on its own line. Text is random but reproducible (seed 0):
sentences of 12-25 common English words, with nugget answers (1-4 words) planted in some sentences.
"""

from __future__ import annotations

import argparse
import random
import time
import warnings
from pathlib import Path

from judge.baselines import BaselineWarning, exam_scores, pa_bleu_scores, pa_meteor_scores, rouge_scores
from judge.errors import ConfigurationError
from judge.types import Answer, Nugget, NuggetBank, Report, Sentence

# Plain English words, so the models' tokenizers see text of a realistic length in tokens.
WORDS = [
    "the", "a", "of", "in", "on", "to", "and", "for", "with", "by", "from", "town", "river", "flood",
    "barrier", "plant", "battery", "council", "water", "board", "region", "government", "company",
    "project", "report", "work", "began", "opened", "built", "funded", "operates", "protects", "homes",
    "district", "year", "month", "tonnes", "people", "workers", "cost", "million", "euros", "contract",
    "engineers", "mayor", "residents", "storm", "wall", "steel", "concrete", "north", "south", "east",
    "west", "new", "old", "large", "small", "public", "private", "local", "national", "first", "second",
    "third", "last", "early", "late", "spring", "summer", "autumn", "winter", "january", "march", "june",
    "september", "october", "december", "said", "announced", "planned", "completed", "delayed", "expected",
    "approved", "rejected", "reported", "according", "officials", "study", "plan", "design", "site", "road",
    "bridge", "harbour", "park", "school", "hospital", "market", "energy", "lithium", "cobalt", "nickel",
    "recycling", "process", "capacity", "production", "jobs", "investment", "grant", "loan", "tax",
    "budget", "vote", "meeting", "statement", "agency", "ministry"
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 25))).capitalize() + "."


def _report(rng: random.Random, run_id: str, request_id: str, n_sentences: int, answers: list[str]) -> Report:
    texts = [_sentence(rng) for _ in range(n_sentences)]
    for answer in answers:  # plant each answer in a random sentence half of the time
        if rng.random() < 0.5:
            i = rng.randrange(n_sentences)
            texts[i] = texts[i][:-1] + f" {answer}."
    return Report(run_id=run_id, request_id=request_id,
                  sentences=tuple(Sentence(index=i, text=t) for i, t in enumerate(texts)))


def generate(runs: int, requests: int, sentences: int, refs: int, nuggets: int, seed: int = 0):
    rng = random.Random(seed)
    banks, reports, gold = {}, [], []
    for q in range(requests):
        rid = f"r{q:03d}"
        answers = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) for _ in range(nuggets)]
        banks[rid] = NuggetBank(request_id=rid, nuggets=tuple(
            Nugget(nugget_id=f"{rid}-n{i}", question=f"What {' '.join(rng.sample(WORDS, 5))}?",
                   answers=(Answer(text=ans),)) for i, ans in enumerate(answers)))
        reports += [_report(rng, f"run{r}", rid, sentences, answers) for r in range(runs)]
        gold += [_report(rng, f"gold{g}", rid, sentences, answers) for g in range(refs)]
    return reports, gold, banks


def timed(label: str, n_reports: int, fn) -> None:
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    print(f"{label:<28} {seconds:9.3f} s  {n_reports / seconds:10.1f} reports/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--refs", type=int, default=2, help="gold reports per request (pa-* need >= 2)")
    parser.add_argument("--nuggets", type=int, default=5)
    parser.add_argument("--extractive", type=Path, help="also time ExtractiveQA with this local checkpoint")
    args = parser.parse_args()
    warnings.simplefilter("ignore", BaselineWarning)

    reports, gold, banks = generate(args.runs, args.requests, args.sentences, args.refs, args.nuggets)
    # Warm-up outside the timings: library imports (nltk via rouge-score, sacrebleu) and first calls.
    sample = [r for r in gold if r.request_id == reports[0].request_id]
    for scorer in (rouge_scores, pa_bleu_scores, pa_meteor_scores):
        scorer(reports[:1], sample)
    n = len(reports)
    print(f"{args.runs} runs x {args.requests} requests x {args.sentences} sentences = {n} reports; "
          f"{args.refs} gold reports and {args.nuggets} nuggets per request")
    timed("ROUGE-1/2/SU4", n, lambda: rouge_scores(reports, gold))
    timed("BLEU + pa-BLEU", n, lambda: pa_bleu_scores(reports, gold))
    timed("METEOR + pa-METEOR", n, lambda: pa_meteor_scores(reports, gold))
    try:
        from judge.baselines.readers.embedding import EmbeddingQA

        start = time.perf_counter()
        qa = EmbeddingQA()
        print(f"{'EmbeddingQA model load':<28} {time.perf_counter() - start:9.3f} s")
    except (ImportError, ConfigurationError) as exc:  # the [qa] extra is optional
        print(f"EXAM (embedding) skipped: {exc}")
    else:
        qa.answer("warm up", ["One sentence."], ["sentence"])
        timed("EXAM embedding", n, lambda: exam_scores(reports, banks, qa))
        qa._cache.clear()
        timed("EXAM embedding + n-EXAM", n + len(gold), lambda: exam_scores(reports, banks, qa, gold=gold))
    if args.extractive:
        from judge.baselines.readers.extractive import ExtractiveQA

        qa_x = ExtractiveQA(args.extractive)
        timed("EXAM extractive", n, lambda: exam_scores(reports, banks, qa_x))


if __name__ == "__main__":
    main()
