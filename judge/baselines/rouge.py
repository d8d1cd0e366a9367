"""ROUGE-1, ROUGE-2 (through `rouge-score`) and ROUGE-SU4 (by hand) of each report against gold reports.

Tokenisation (the same for all three variants): rouge-score's own rule (lowercase, every non-alphanumeric
character is a separator), then stop words removed (judge.baselines.stopwords, on by default; rouge-score has
no such option, so a tokenizer that does it is passed in), then the Porter stemmer on tokens longer than 3
characters (as rouge-score does; on by default). Stop words go before stemming so "this" does not slip
through as "thi".

ROUGE-SU4 (Lin 2004): the bag of skip-bigrams -- ordered token pairs (t_i, t_j), i < j, at most 4 tokens
between them (j - i <= 5) -- plus the bag of unigrams. P = overlap / candidate count, R = overlap / reference
count, F = 2PR / (P + R), overlap = clipped (multiset) intersection.

Several references: by default the reference with the highest F per variant is taken and its P, R, F are
reported together (rouge-score's `score_multi` rule); `multi="mean"` averages P, R and F over references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from judge.baselines._common import (
    group_gold,
    index_reports,
    report_text,
    require_topics,
    with_aggregates,
)
from judge.baselines.stopwords import STOPWORDS, STOPWORDS_ID
from judge.errors import InputError, missing_extra
from judge.formats.scores import ScoreRow
from judge.types import Report

MultiRef = Literal["max", "mean"]
VARIANTS = ("ROUGE-1", "ROUGE-2", "ROUGE-SU4")
STATS = ("P", "R", "F")
METRICS = tuple(f"{v}-{s}" for v in VARIANTS for s in STATS)
SU4_MAX_GAP = 4


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    fmeasure: float


class RougeTokenizer:
    """rouge-score's tokenisation with stop-word removal added before stemming. Has `.tokenize(text)`."""

    def __init__(self, stem: bool = True, stopwords: bool = True):
        _require_rouge()
        from nltk.stem import porter  # rouge-score depends on nltk; the Porter stemmer needs no NLTK data
        from rouge_score import tokenize as rs_tokenize

        self._rs = rs_tokenize
        self._stemmer = porter.PorterStemmer() if stem else None
        self._stop = STOPWORDS if stopwords else frozenset()
        self.stem, self.stopwords = stem, stopwords

    def tokenize(self, text: str) -> list[str]:
        # rs_tokenize.tokenize(text, None) lowercases, splits on non-alphanumerics and drops empty tokens.
        tokens = [t for t in self._rs.tokenize(text, None) if t not in self._stop]
        if self._stemmer is not None:
            tokens = [self._stemmer.stem(t) if len(t) > 3 else t for t in tokens]
        return [t for t in tokens if t]


def _require_rouge() -> None:
    """rouge-score (and the nltk it brings) come with the `rouge` extra: say so in one line when absent."""
    try:
        import nltk.stem.porter  # noqa: F401
        import rouge_score.tokenize  # noqa: F401
    except ImportError:
        raise missing_extra("the ROUGE baseline", "rouge") from None


def _prf(overlap: int, candidate: int, reference: int) -> PRF:
    p = overlap / candidate if candidate else 0.0
    r = overlap / reference if reference else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f)


def su4_units(tokens: Sequence[str], max_gap: int = SU4_MAX_GAP) -> Counter:
    """Unigrams plus skip-bigrams (t_i, t_j) with i < j <= i + max_gap + 1, as a multiset."""
    units: Counter = Counter((t,) for t in tokens)
    for i in range(len(tokens)):
        for j in range(i + 1, min(len(tokens), i + max_gap + 2)):
            units[(tokens[i], tokens[j])] += 1
    return units


def rouge_su4(candidate: Sequence[str], reference: Sequence[str], max_gap: int = SU4_MAX_GAP) -> PRF:
    c, r = su4_units(candidate, max_gap), su4_units(reference, max_gap)
    return _prf(sum((c & r).values()), sum(c.values()), sum(r.values()))


class RougeScorer:
    """Scores one text against one reference text with ROUGE-1, ROUGE-2 and ROUGE-SU4 (tokenised once)."""

    def __init__(self, stem: bool = True, stopwords: bool = True):
        _require_rouge()
        from rouge_score import rouge_scorer

        self.tokenizer = RougeTokenizer(stem=stem, stopwords=stopwords)
        self._rs = rouge_scorer.RougeScorer(["rouge1", "rouge2"], tokenizer=self.tokenizer)

    def score(self, candidate: str, reference: str) -> dict[str, PRF]:
        rs = self._rs.score(reference, candidate)  # rouge-score's order: (target, prediction)
        su4 = rouge_su4(self.tokenizer.tokenize(candidate), self.tokenizer.tokenize(reference))
        out = {"ROUGE-1": rs["rouge1"], "ROUGE-2": rs["rouge2"], "ROUGE-SU4": su4}
        return {k: PRF(v.precision, v.recall, v.fmeasure) for k, v in out.items()}

    def score_multi(self, candidate: str, references: Sequence[str], multi: MultiRef = "max"
                    ) -> dict[str, PRF]:
        if not references:
            raise ValueError("ROUGE needs at least one reference")
        per_ref = [self.score(candidate, ref) for ref in references]
        out = {}
        for variant in VARIANTS:
            scores = [s[variant] for s in per_ref]
            if multi == "max":
                out[variant] = max(scores, key=lambda s: s.fmeasure)  # first reference wins ties
            else:
                out[variant] = PRF(*(sum(getattr(s, a) for s in scores) / len(scores)
                                     for a in ("precision", "recall", "fmeasure")))
        return out


def rouge_signature(stem: bool = True, stopwords: bool = True, multi: MultiRef = "max") -> str:
    _require_rouge()
    import rouge_score

    version = getattr(rouge_score, "__version__", None) or _dist_version("rouge-score")
    from judge.judging.signature import BaselineSignature

    return BaselineSignature.of(
        "ROUGE", ("metrics", f"ROUGE-1,ROUGE-2(rouge-score {version}),ROUGE-SU4(argue-judge, max_gap={SU4_MAX_GAP}, "
                             "+unigrams)"),
        ("tokenizer", "rouge-score"), ("stemming", "porter" if stem else "off"),
        ("stopwords", STOPWORDS_ID if stopwords else "off"), ("multi_ref", multi),
        ("report_text", "sentences joined by spaces"), ("missing_report", "0"), ("aggregate", "macro-mean")).short()


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def rouge_scores(reports: Iterable[Report], gold: Iterable[Report], multi: MultiRef = "max",
                 stem: bool = True, stopwords: bool = True) -> list[ScoreRow]:
    """ROUGE-{1,2,SU4}-{P,R,F} of each report against the gold reports of its request.

    Evaluated requests = those with gold reports. A report of a request without gold report is an InputError;
    a run without a report for an evaluated request scores 0 there. `all` rows: mean over requests.
    """
    if multi not in ("max", "mean"):
        raise ValueError(f"multi must be 'max' or 'mean', not {multi!r}")
    runs = index_reports(reports)
    refs = group_gold(gold)
    if not refs:
        raise InputError("no gold (reference) reports given; ROUGE needs at least one per request")
    require_topics(runs, refs, "gold (reference) report")
    scorer = RougeScorer(stem=stem, stopwords=stopwords)
    values: dict[tuple[str, str, str], float] = {}
    for run_id in sorted(runs):
        for request_id in sorted(refs):
            report = runs[run_id].get(request_id)
            if report is None:
                for metric in METRICS:
                    values[(run_id, request_id, metric)] = 0.0
                continue
            references = [report_text(r) for r in refs[request_id]]
            result = scorer.score_multi(report_text(report), references, multi)
            for variant in VARIANTS:
                prf = result[variant]
                for stat, value in zip(STATS, (prf.precision, prf.recall, prf.fmeasure), strict=True):
                    values[(run_id, request_id, f"{variant}-{stat}")] = value
    return with_aggregates(values)
