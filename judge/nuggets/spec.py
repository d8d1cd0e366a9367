"""The specifications of the nugget calls: every choice of `create_nuggets`, `pool_nuggets` and
`accept_candidates` (and of `argue-judge nuggets create`, `nuggets pool`, `nuggets pool --accept`), declared once,
typed and immutable, in sections; and `resolve()`, the one place that decides what follows from them.

    CreateSpec                                  PoolSpec                               AcceptSpec
      inputs     requests, docs, doc_lists,       inputs  nuggets, reports,              inputs   nuggets,
                 gold_report                              requests, docs                          candidates
      creation   NuggetSettings (K, M, ...)       model, judge, execution: as create     outputs  out
      model      judge.settings.ModelSettings     outputs out (the candidates file),
      judge      prompts, thresholds, passages            page (its review page)
      execution  cache, concurrency, batch
      outputs    out (the banks' folder), format

Three specs, not one: creation has settings pooling never reads (K, M, the merge and binding shares) and writes a
folder of banks, pooling writes a candidates file and its page, and accepting asks no model at all; a single spec
would carry fields that two of the three commands refuse. The sections they share are the same classes.

Each field's range or choices is its type (judge.settings), so a refused value is one line naming it whoever built
the spec. `CreateSpec.of(**settings)` builds one from flat names (judge.settings.Sectioned): the API's keywords and
each option of the commands are these names (judge.cli.nuggets.OPTION_FIELDS; tests/test_nugget_spec.py).
`resolve()` decides, once, the settings the judge applies, the decision thresholds the bindings get (eval's: the
shipped rules for the embedded judge by default) and the calls in flight; the call executes the resulting
`NuggetPlan`. Light: `import judge` loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, SkipValidation

from judge.errors import SettingError
from judge.formats import loader
from judge.formats.loader import DocumentInputs, NuggetInputs, PathLike, ReportInputs, RequestInputs
from judge.llm.cache.backends import DEFAULT_CACHE_DIR
from judge.nuggets.settings import BankFormat, NuggetSettings
from judge.settings import (
    DEFAULT_THRESHOLDS,
    Concurrency,
    DefaultThresholds,
    Flag,
    ModelSettings,
    PassagePolicy,
    Seconds,
    Sectioned,
    Text,
    Thresholds,
    settings_class,
)
from judge.types import Document, NuggetBank, Report, Request

__all__ = ["AcceptSpec", "CreateSpec", "NuggetExecution", "NuggetJudging", "NuggetPlan", "PoolSpec"]

# Drafting writes several nuggets per call: eval's 512 tokens cut a five-nugget draft short.
CREATE_MAX_TOKENS = 1024
# What writes the review page of the candidates (the command line's judge.view.candidates.candidates_page: the
# nugget floor renders no HTML): the banks, the candidates and the candidates file's name in, the page out.
PageRenderer = Callable[[dict[str, NuggetBank], list[dict[str, Any]], str], str]


def check_paths(files: dict[str, Any], optional: tuple[str, ...] = ()) -> None:
    """The file arguments (by name): a TypeError naming the argument unless it is a path (str or Path) or a list of
    paths (None only where `optional`), a ValueError for an empty list."""
    for name, value in files.items():
        if (value is None and name in optional) or isinstance(value, str | Path):
            continue
        if isinstance(value, list | tuple) and all(isinstance(v, str | Path) for v in value):
            if not value:
                raise ValueError(f"{name} is empty: give a path or a list of paths")
            continue
        raise TypeError(f"{name} must be a path (str or Path) or a list of paths, not {type(value).__name__} "
                        f"{value!r:.60}")


def check_records(section: object, kinds: dict[str, type], optional: tuple[str, ...] = ()) -> None:
    """The record arguments of a section (`kinds`: each one's domain type): paths, or objects of that type or dicts
    in its file format (judge.formats.loader.records: a wrong kind is a TypeError naming the argument and its
    index, an empty list a ValueError)."""
    for name, kind in kinds.items():
        loader.check(name, getattr(section, name), kind, optional=name in optional)


# The inputs are kept as given (paths, or the objects or dicts given in place of a file), so that a message naming
# them names them as given. judge.formats.loader reads them when the call runs.

@settings_class
class CreateInputs:
    """What banks are created from."""

    KINDS: ClassVar[dict[str, type]] = {"requests": Request, "docs": Document, "gold_report": Report}

    requests: SkipValidation[RequestInputs]
    docs: SkipValidation[DocumentInputs]
    doc_lists: SkipValidation[PathLike | None] = None        # which documents are which request's (None: all)
    gold_report: SkipValidation[ReportInputs | None] = None  # reports drafted from too; they attest nothing

    def __post_init__(self) -> None:
        check_records(self, self.KINDS, optional=("gold_report",))
        check_paths({"doc_lists": self.doc_lists}, optional=("doc_lists",))


@settings_class
class PoolInputs:
    """What candidate answers are pooled from."""

    KINDS: ClassVar[dict[str, type]] = {"nuggets": NuggetBank, "reports": Report, "requests": Request,
                                        "docs": Document}

    nuggets: SkipValidation[NuggetInputs]
    reports: SkipValidation[ReportInputs]
    requests: SkipValidation[RequestInputs]
    docs: SkipValidation[DocumentInputs]

    def __post_init__(self) -> None:
        check_records(self, self.KINDS)


@settings_class
class AcceptInputs:
    """The banks, and the candidates a person reviewed."""

    KINDS: ClassVar[dict[str, type]] = {"nuggets": NuggetBank}

    nuggets: SkipValidation[NuggetInputs]
    candidates: SkipValidation[PathLike]

    def __post_init__(self) -> None:
        check_records(self, self.KINDS)
        check_paths({"candidates": self.candidates})


@settings_class
class NuggetJudging:
    """How an answer is bound to a document: eval's supports_citation decision, as eval asks it."""

    prompts_dir: Path | None = None
    # None: the model's own verdicts; DEFAULT_THRESHOLDS: eval's default for this judge, decided by resolve()
    thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS
    passages: PassagePolicy = PassagePolicy()   # what the decision shows of a document


def _cache(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value  # one spelling: a folder or a redis:// URL, as text


@settings_class
class NuggetExecution:
    """How the calls are asked; nothing here changes a bank or a candidate."""

    cache: Annotated[Text | None, BeforeValidator(_cache)] = str(DEFAULT_CACHE_DIR)  # a folder or redis://...
    concurrency: Concurrency = 4     # decisions in flight at once
    batch: Flag = False              # ask through the provider's batch jobs (judge.llm.batch, docs/batch.md)
    batch_poll: Seconds = 30.0       # with batch: seconds between two looks at a running job


def _out(section: BankOutputs | PoolOutputs | AcceptOutputs) -> None:
    out = section.out
    if out is not None and not isinstance(out, str | Path):
        raise TypeError(f"out must be a path (str or Path) or a list of paths, not {type(out).__name__} {out!r:.60}")


@settings_class
class BankOutputs:
    """Where created banks go: the folder `out` (the review file and the summary beside it), in `format`."""

    out: SkipValidation[PathLike | None] = None      # None: the banks are returned, nothing is written
    format: BankFormat = "v3"                        # v3 (Auto-ARGUE, AutoJudge) or castorini's nuggetizer

    def __post_init__(self) -> None:
        _out(self)


@settings_class
class PoolOutputs:
    """Where candidates go: the file `out` (the refused answers and the summary beside it); `page` also writes
    their review page beside it (OUT.html), as `nuggets pool` does."""

    out: SkipValidation[PathLike | None] = None
    page: SkipValidation[PageRenderer | None] = None

    def __post_init__(self) -> None:
        _out(self)
        if self.page is not None and not callable(self.page):
            raise TypeError(f"page must render the review page (a callable), not {type(self.page).__name__}")


@settings_class
class AcceptOutputs:
    """The folder the extended banks are written to (v3)."""

    out: SkipValidation[PathLike]

    def __post_init__(self) -> None:
        _out(self)


class _ModelSpec(Sectioned):
    """What the two specs that ask a model share: their refusals, and the plan."""

    NESTED: ClassVar[dict[type, dict[str, type]]] = {}   # passages are given whole (`passages=PassagePolicy(...)`)
    # each subclass declares the sections `model`, `judge` and `execution` as its fields

    def _check(self) -> None:
        if self.execution.batch:
            from judge.llm.batch import check_batch

            check_batch(self.model)

    def _plan(self, tag: str) -> NuggetPlan:
        """The settings the judge applies (judge.llm.applied), the thresholds the bindings get (the one place a
        nugget call's default thresholds are decided, as eval's), the calls in flight."""
        from judge.judging.thresholds import check_confidence_for, default_thresholds
        from judge.llm.applied import applied_settings
        from judge.llm.batch import MAX_REQUESTS
        from judge.settings import JudgeSettings

        model, unapplied = applied_settings(self.model)
        asked = JudgeSettings(prompts_dir=self.judge.prompts_dir, thresholds=self.judge.thresholds)
        judge, notice = default_thresholds(model, asked)
        check_confidence_for(model, judge)   # on the model as applied: a provider may drop logprobs
        execution = self.execution
        return NuggetPlan(model=model, thresholds=judge.thresholds, thresholds_notice=notice,  # type: ignore[arg-type]
                          unapplied=tuple(unapplied), prompts_dir=self.judge.prompts_dir,
                          passages=self.judge.passages, execution=execution, tag=tag,
                          in_flight=MAX_REQUESTS if execution.batch else execution.concurrency)


@settings_class
class CreateSpec(_ModelSpec):
    """One nugget creation, every choice declared and checked (see the module's docstring)."""

    SECTIONS: ClassVar[dict[str, type]] = {
        "inputs": CreateInputs, "creation": NuggetSettings, "execution": NuggetExecution, "outputs": BankOutputs,
        "judge": NuggetJudging, "model": ModelSettings}

    inputs: CreateInputs
    model: ModelSettings
    creation: NuggetSettings = NuggetSettings()
    judge: NuggetJudging = NuggetJudging()
    execution: NuggetExecution = NuggetExecution()
    outputs: BankOutputs = BankOutputs()

    @classmethod
    def of(cls, **settings: Any) -> CreateSpec:
        """`Sectioned.of`, with creation's own default for the model's max_tokens (CREATE_MAX_TOKENS) unless the
        model is given whole."""
        if not isinstance(settings.get("model"), ModelSettings):
            settings.setdefault("max_tokens", CREATE_MAX_TOKENS)
        return super().of(**settings)

    def __post_init__(self) -> None:
        self._check()

    def resolve(self) -> NuggetPlan:
        """What the call does, decided once (see `NuggetPlan`)."""
        return self._plan(self.creation.signed(self.judge.passages))


@settings_class
class PoolSpec(_ModelSpec):
    """One pooling of candidate answers (see the module's docstring)."""

    SECTIONS: ClassVar[dict[str, type]] = {
        "inputs": PoolInputs, "execution": NuggetExecution, "outputs": PoolOutputs, "judge": NuggetJudging,
        "model": ModelSettings}

    inputs: PoolInputs
    model: ModelSettings
    judge: NuggetJudging = NuggetJudging()
    execution: NuggetExecution = NuggetExecution()
    outputs: PoolOutputs = PoolOutputs()

    def __post_init__(self) -> None:
        if self.outputs.page is not None and self.outputs.out is None:
            raise SettingError("page writes OUT.html beside the candidates: give out= too (--out)")
        self._check()

    def resolve(self) -> NuggetPlan:
        """What the call does, decided once (see `NuggetPlan`)."""
        return self._plan(NuggetSettings().pooled(self.judge.passages))


@settings_class
class AcceptSpec(Sectioned):
    """One acceptance of reviewed candidates: nothing to decide, nothing asked of a model."""

    SECTIONS: ClassVar[dict[str, type]] = {"inputs": AcceptInputs, "outputs": AcceptOutputs}
    NESTED: ClassVar[dict[type, dict[str, type]]] = {}

    inputs: AcceptInputs
    outputs: AcceptOutputs


@dataclass(frozen=True)
class NuggetPlan:
    """A resolved CreateSpec or PoolSpec: what the call executes (judge.nuggets.api). Built by `resolve()`, never by
    hand."""

    model: ModelSettings             # as the judge applies it (judge.llm.applied)
    thresholds: Thresholds | None    # the bindings' decision thresholds, resolved (never DEFAULT_THRESHOLDS)
    thresholds_notice: str           # which default thresholds the judge got, or why none ("" when given or none)
    unapplied: tuple[str, ...]       # each model setting the judge could not apply, a sentence
    prompts_dir: Path | None
    passages: PassagePolicy
    execution: NuggetExecution
    tag: str                         # the call's settings in its signature
    in_flight: int                   # decisions let wait at once: a whole batch job's worth with batch jobs
