"""Every label vocabulary, defined once. Prompts, response models, the flowchart and the metrics import these."""

from __future__ import annotations

from typing import Literal, get_args

# The flowchart's own vocabulary (its decisions, outcomes and their values) is declared with the flowchart, as one
# table, in judge.chart; these are the names other modules import from here.
from judge.chart import OUTCOME_VALUE as OUTCOME_VALUE
from judge.chart import PRECISION_DENOMINATOR as PRECISION_DENOMINATOR
from judge.chart import PRECISION_NUMERATOR as PRECISION_NUMERATOR
from judge.chart import Outcome as Outcome
from judge.chart import Value as Value

SupportVerdict = Literal["supported", "not_supported", "cannot_judge"]

# Where a response's rationale goes: before the verdict (think first; the default), after it (the verdict is
# generated first, the rationale may be cut short), or nowhere (nothing but the verdict is generated). Set per
# prompt set, by an option line in the template (judge.judging.prompts).
RationalePosition = Literal["first", "last", "omit"]
RATIONALE_POSITIONS: tuple[RationalePosition, ...] = get_args(RationalePosition)

# How a panel of judges turns its verdicts into the one it records (judge.judging.panel says what each means for
# every decision): the positive verdict wins with more than half the verdicts given, only if every judge gives it,
# or if any judge does.
Vote = Literal["majority", "unanimous", "any"]
VOTES: tuple[Vote, ...] = get_args(Vote)
DEFAULT_VOTE: Vote = "majority"   # a panel given no vote

CitationPolicy = Literal["all", "any", "joint"]
CITATION_POLICIES: tuple[CitationPolicy, ...] = get_args(CitationPolicy)

# What a request's length limit counts: NeuCLIR/RAGTIME `limit` is characters, a `word_limit` (TREC RAG) is words.
LimitUnit = Literal["characters", "words"]

# How the human sample of prediction-powered estimates was drawn (`--sample`; judge.metrics.sampling says what each
# design means).
SampleDesign = Literal["reports", "requests"]
SAMPLE_DESIGNS: tuple[SampleDesign, ...] = get_args(SampleDesign)

Aggregator = Literal["OR", "AND"]
Importance = Literal["vital", "okay"]
IMPORTANCE_WEIGHT: dict[str, int] = {"vital": 2, "okay": 1}


# Why a sentence has no outcome. Such sentences are counted and reported, never scored.
SentenceStatus = Literal["judged", "truncated", "failed", "undetermined"]
