"""The judgments file: the seam between judging and scoring.

LLM judges and human assessors write the same records; every metric is computed from these alone (plus the
nugget list each record carries), so scoring never calls a model. One JSON object per line, one line per report.

A human assessor may leave out everything but `outcome` and `earned` per sentence; or give only `decisions`
and let the flowchart derive the outcome (see `judge.judging.replay.complete_from_decisions`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from judge.errors import InputError
from judge.formats._jsonl import iter_jsonl_located, row_breaking, source_name
from judge.labels import Aggregator, Importance, Outcome, SentenceStatus
from judge.types import Answer, Nugget, NuggetBank

FORMAT_VERSION = "argue-judgments/1"

# What the injection detector (defence.injection) found: the sentence's own text addresses the judge, or a document
# it cites does. A flag never changes an outcome by itself; `eval --on-injection penalise` acts on the first.
Flag = Literal["addresses_judge", "cited_document_addresses_judge"]
ADDRESSES_JUDGE: Flag = "addresses_judge"
CITED_DOCUMENT_ADDRESSES_JUDGE: Flag = "cited_document_addresses_judge"
# The judge named on decisions argue-judge takes itself, without a model (a missing document, a penalty).
ARGUE_JUDGE = "argue-judge"
# The validation context key under which a reader passes the decision names a record may have.
KNOWN_DECISIONS = "decisions"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EarnedAnswer(_Record):
    """A nugget answer earned by a sentence. `answer` is None for an absence nugget (earned as a whole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nugget_id: str
    answer: str | None = None


class ShownText(_Record):
    """How much of one document the judge was shown (supports_citation): `shown_chars` of its `doc_chars`
    characters, within a budget of `budget_chars` (--max-doc-chars, or its share when several documents are
    shown together under --citation-policy joint). Gap markers ("[...]") count as shown: they are part of
    the budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    doc_id: str
    shown_chars: int
    doc_chars: int
    budget_chars: int


class DecisionRecord(_Record):
    """One diamond of the flowchart as it was decided.

    `verdict` is the diamond's yes/no: supported? answers a nugget? claims absence? confirmed by an absence
    nugget? needs a citation? repeats an earlier claim? None means the judge could not decide (it said
    "cannot judge", or every retry failed; then `error` says why).

    `confidence` is the probability the judge's model gave to the answer it wrote for the verdict, from its token
    log-probabilities (judge.llm.logprob); None where the provider gave none or the decision has no single
    verdict field (answers_nugget, absence_nugget): never guessed. With thresholds (`eval --thresholds`),
    `threshold` is the one the verdict was held to, and `model_verdict` the model's own verdict where the
    threshold flipped it (`verdict` is then the applied one, which the flowchart followed). All three are left
    out of the file when None.

    `reasoning` is what a reasoning judge thought before it answered (a `<think>` block, `reasoning_content`), kept
    only when the run asked to keep it (`eval --keep-reasoning`); never read as the answer, never scored. Left out
    of the file when None.

    `panel` is every judge's own record where a panel of judges decided (judge.judging.panel), in the panel's
    order; this record then holds the panel's vote (`verdict`, `matches`) and `judge` names the panel. Left out of
    the file when None, so a single judge's records are as they were.
    """

    # The name of a decision the judge asks (judge.judging.decisions.REGISTRY, named by the flowchart). This floor
    # is below judging, so a reader is told the names (`iter_judgment_lines(..., decisions=...)`) and checks them.
    decision: str
    verdict: bool | None
    doc_ids: list[str] = Field(default_factory=list, description="documents shown to the judge")
    matches: list[EarnedAnswer] = Field(default_factory=list, description="answers_nugget / absence_nugget")
    rationale: str = ""
    # supports_citation: the numbers of the passages the judge gave as evidence, and the exact document text they
    # resolve to (joined by new lines), so the evidence is verified by construction. A human record may give
    # the text alone.
    evidence: str | None = None
    evidence_numbers: list[int] = Field(default_factory=list, description="numbered passages given as evidence")
    judge: str = "human"
    prompt_hash: str | None = None
    # Whether this run was served from the cache: a per-run fact, so it is kept out of the judgments file (which
    # must be byte-identical on a rerun) and written to cache-log.jsonl instead.
    cached: bool = Field(default=False, exclude=True)
    # Cited documents the collection lacks (supports_citation only). The walker gathers them into the report's
    # `missing_doc_ids`, which is what the judgments file keeps.
    missing_doc_ids: list[str] = Field(default_factory=list, exclude=True)
    error: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    model_verdict: bool | None = None
    shown: list[ShownText] | None = None
    reasoning: str | None = None
    panel: list[DecisionRecord] | None = None

    @field_validator("decision")
    @classmethod
    def _a_decision_the_judge_asks(cls, name: str, info: ValidationInfo) -> str:
        known: Collection[str] | None = (info.context or {}).get(KNOWN_DECISIONS)
        if known is not None and name not in known:
            raise ValueError(f"{name!r} is not a decision of the judge; write one of {', '.join(known)}")
        return name

    @model_serializer(mode="wrap")
    def _without_absent_confidence(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        for key in ("confidence", "threshold", "model_verdict", "shown", "reasoning", "panel"):
            if key in data and data[key] is None:
                del data[key]
        return data


class SentenceJudgment(_Record):
    index: int
    text: str
    citations: list[str] = Field(default_factory=list)
    status: SentenceStatus = "judged"
    outcome: Outcome | None = None
    earned: list[EarnedAnswer] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    # The detector's flags, the rule behind each ("sentence: <rule>", "document <doc_id>: <rule>"), the pieces of
    # the sentence withheld from the model (--on-injection quarantine, judge.defence.quarantine) and why the outcome was
    # set without asking the model (--on-injection penalise). Left out of the file when empty.
    flags: list[Flag] = Field(default_factory=list)
    flag_rules: list[str] = Field(default_factory=list)
    # The learned detector's score (0-1) behind each flag rule it fired, keyed by that rule ("sentence: learned").
    # Left out of the file when empty.
    flag_scores: dict[str, float] = Field(default_factory=dict)
    withheld: list[str] = Field(default_factory=list)
    penalty: str | None = None

    @model_serializer(mode="wrap")
    def _without_empty_flags(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        for key in ("flags", "flag_rules", "flag_scores", "withheld", "penalty"):
            if key in data and not data[key]:
                del data[key]
        return data


class NuggetSummary(_Record):
    """What scoring needs of a nugget: identity, aggregation, weight, the answer set and, per answer, the
    documents that attest it (`references`: Auto-ARGUE's relevance and coverage need them, so a judgments file
    scores exactly without its nugget bank; None in records written without them)."""

    nugget_id: str
    question: str
    aggregator: Aggregator = "OR"
    importance: Importance = "okay"
    absence: bool = False
    answers: list[str] = Field(default_factory=list)
    references: dict[str, list[str]] | None = None

    @classmethod
    def of(cls, nugget: Nugget) -> NuggetSummary:
        return cls(
            nugget_id=nugget.nugget_id, question=nugget.question, aggregator=nugget.aggregator,
            importance=nugget.importance, absence=nugget.absence, answers=[a.text for a in nugget.answers],
            references={a.text: list(a.doc_ids) for a in nugget.answers},
        )

    def nugget(self) -> Nugget:
        """The nugget back, with its answers' documents (None: without references)."""
        refs = self.references or {}
        return Nugget(nugget_id=self.nugget_id, question=self.question, aggregator=self.aggregator,
                      importance=self.importance, absence=self.absence,
                      answers=tuple(Answer(text=a, doc_ids=tuple(refs.get(a, ()))) for a in self.answers))


class ReportJudgment(_Record):
    format: str = FORMAT_VERSION
    run_id: str
    request_id: str
    team_id: str | None = None
    assessor: str = Field(default="human", description="'human', 'human:<name>' or the judge model id")
    sentences: list[SentenceJudgment] = Field(default_factory=list)
    nuggets: list[NuggetSummary] | None = Field(
        default=None, description="the request's nugget bank; None = no bank, recall is undefined")
    missing_doc_ids: list[str] = Field(default_factory=list)
    signature: str | None = None

    @field_validator("run_id", "request_id")
    @classmethod
    def _one_tsv_field(cls, value: str) -> str:
        # Both ids are fields of scores.tsv and leaderboard.tsv (see judge.formats._jsonl.check_plain_id).
        if row_breaking(value) is not None:
            raise ValueError(f"{value!r} contains a tab or a line break, which would break the tab-separated "
                             "outputs; remove it from the id")
        return value

    @property
    def key(self) -> tuple[str, str]:
        return (self.run_id, self.request_id)


def nugget_summaries(bank: NuggetBank | None) -> list[NuggetSummary] | None:
    return None if bank is None else [NuggetSummary.of(n) for n in bank.nuggets]


def dumps(judgment: ReportJudgment) -> str:
    # Sorted keys and no floats of our own making keep reruns byte-identical.
    return json.dumps(judgment.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def write_judgments(path: Path, judgments: Iterable[ReportJudgment]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for judgment in judgments:
            out.write(dumps(judgment) + "\n")
    tmp.replace(path)


def iter_judgment_lines(source: str | Path, *, decisions: Collection[str]
                        ) -> Iterator[tuple[int, int, bytes, ReportJudgment]]:
    """Read a judgments file (path, .gz too) or literal JSONL text (a str containing a newline or starting with '{')
    record by record, with where each one is: (line number, byte offset of its line, the line's raw bytes,
    judgment), so a reader can index a file in one pass and read a record again later. `decisions`: the names a
    decision record may have; any other is refused with the file and line, so a misspelt decision in an assessor's
    file is never silently unasked. Readers above the judging floor use judge.judging.judgments_reader, which
    passes the judge's own names (this floor may not import them)."""
    name = source_name(source)
    number = 0
    for number, offset, raw, data in iter_jsonl_located(source):
        yield number, offset, raw, parse_judgment(data, name, number, decisions=decisions)
    if number == 0:  # scoring nothing would print an empty leaderboard and exit 0: a silent zero
        raise InputError("no judgments in this file (it is empty); give one JSON judgments record per line", name)


def parse_judgment(data: object, name: str, line: int | None, *, decisions: Collection[str]) -> ReportJudgment:
    """One judgments record (a line's object, or a dict given in memory), checked as the file reader checks it."""
    try:
        return ReportJudgment.model_validate(data, context={KNOWN_DECISIONS: tuple(decisions)})
    except ValidationError as exc:
        raise InputError(f"not a judgments record: {_first_error(exc)}", name, line) from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field '{where}': {err['msg']}{more}"
