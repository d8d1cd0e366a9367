"""The specification of one evaluation: every choice of `judge.evaluate` and `argue-judge eval`, declared once,
typed and immutable, in sections; and `resolve()`, the one place that decides what follows from it.

    EvalSpec
      inputs     what is judged: reports, requests, docs, nuggets; a human sample and how it was drawn; gold
      model      who judges (judge.settings.ModelSettings)
      judge      how sentences are judged (judge.settings.JudgeSettings: policy, passages, injection, thresholds)
      retry      how a failed call is tried again (judge.settings.RetryPolicy)
      execution  where and at what cost: concurrency, cache, budget, shard, resume, Ray, batch jobs
      outputs    what is written: the output folder, measures, the HTML view, the baselines

Every field's range or choices is its type (judge.settings), so a refused value is one line naming it whoever built
the spec. `EvalSpec.of(**settings)` builds one from flat names (judge.settings.Sectioned): each field of every
section has one name, unique across sections (a section given whole by its own name, `judge=JudgeSettings(...)`,
is a base its fields override); `judge.evaluate` takes exactly these names, and each eval option is one of them
(judge.cli.evaluate.OPTION_FIELDS, held 1:1 by tests/test_spec.py).

`resolve()` decides, once, what the run really does: the model settings the judge applies (and a note for each
that it cannot), the decision thresholds (the shipped default for the embedded judge), the Ray workers, the calls
in flight. The run executes the resulting `EvalPlan` and never decides these again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, SkipValidation

from judge.errors import ConfigurationError, SettingError
from judge.formats.loader import DocumentInputs, JudgmentInputs, NuggetInputs, ReportInputs, RequestInputs
from judge.labels import DEFAULT_VOTE, SampleDesign, Vote
from judge.llm.cache.backends import DEFAULT_CACHE_DIR
from judge.llm.panel import PanelMember, check_panel
from judge.run.shards import Shard
from judge.settings import (
    DEFAULT_THRESHOLDS,
    Concurrency,
    Confidence,
    Flag,
    Fraction,
    HumanSample,
    JudgeSettings,
    ModelSettings,
    RetryPolicy,
    Seconds,
    Sectioned,
    Text,
    Usd,
    Workers,
    settings_class,
)

__all__ = ["EvalPlan", "EvalSpec", "Execution", "InputSources", "Outputs"]



@settings_class
class InputSources:
    """What is judged, as given (None where a run is handed its inputs already loaded: judge.run.evaluate)."""

    reports: SkipValidation[ReportInputs | None] = None
    requests: SkipValidation[RequestInputs | None] = None
    docs: SkipValidation[DocumentInputs | None] = None
    nuggets: SkipValidation[NuggetInputs | None] = None
    # Human judgments of a sample of the reports: prediction-powered estimates (docs/ppi.md). `sample` and
    # `confidence` describe that sample and its intervals, so they are refused without it.
    human: SkipValidation[JudgmentInputs | None] = None
    sample: SampleDesign = "reports"
    confidence: Confidence = 0.95
    gold: SkipValidation[ReportInputs | None] = None   # gold reports, for the reference-based baselines

    def __post_init__(self) -> None:
        HumanSample(self.sample, self.confidence, given=self.human is not None)  # its rule: no sample, no design


def _shard(value: Any) -> Any:
    return Shard.parse(value) if isinstance(value, str) else value  # "2/3", as --shard takes it


def _cache(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value  # one spelling: a folder or a redis:// URL, as text


@settings_class
class Execution:
    """Where the run judges and at what cost; nothing here changes a verdict."""

    concurrency: Concurrency = 4                        # decisions in flight at once (per Ray worker)
    cache: Annotated[Text | None, BeforeValidator(_cache)] = str(DEFAULT_CACHE_DIR)  # a folder or redis://HOST:PORT/DB
    max_cost: Usd | None = None                          # stop before spending more (USD)
    price_per_1k: Usd | None = None                      # USD per 1,000 tokens, for a model litellm has no price for
    max_failed_fraction: Fraction = 0.2                  # above this share of failed sentences the run failed
    # Keep the reports already judged whose inputs did not change: those of a killed run's log in OUT/.argue-run if
    # there is one, else those of the finished OUT/judgments.jsonl (judge.run.evaluate.stream_for).
    resume: Flag = False
    shard: Annotated[Shard | None, BeforeValidator(_shard)] = None   # judge only shard I of N
    # Who judges (judge.run.executors): None, this process; "local", a Ray runtime on this machine's cores; "auto" or
    # "ray://HOST:PORT", an existing cluster. `workers`: Ray workers (default: the cluster's cores).
    ray: Text | None = None
    workers: Workers | None = None
    # Ask through provider batch jobs (judge.llm.batch), looking at each job every `batch_poll` seconds.
    batch: Flag = False
    batch_poll: Seconds = 30.0

    def __post_init__(self) -> None:
        from judge.run.executors import check_ray_address

        check_ray_address(self.ray, self.workers)


@settings_class
class Outputs:
    """What the run writes besides what it returns."""

    out: Path | None = None                       # eval's five files, and the working folder of a running eval
    measures: tuple[Text, ...] | None = None      # the measures the rows and the leaderboard keep (None: all)
    view: Flag = False                            # also write the HTML view to OUT/view
    baselines: Flag = False                       # also score the reports with the baselines


@settings_class
class Judges:
    """A panel of judges (judge.judging.panel) instead of one: every judge answers every decision, and `vote` decides
    (majority when not given). Empty: the model alone judges."""

    panel: tuple[PanelMember, ...] = ()
    vote: Vote | None = None

    def __post_init__(self) -> None:
        if self.panel:
            check_panel(self.panel)
        elif self.vote is not None:
            raise SettingError("vote (--vote) applies to a panel of judges: give two judges or more (--model given "
                               "more than once, --panel-judge; panel= or a list of models in the API), or drop it")


@settings_class
class EvalSpec(Sectioned):
    """One evaluation, every choice declared and checked (see the module's docstring)."""

    SECTIONS: ClassVar[dict[str, type]] = {
        "inputs": InputSources, "model": ModelSettings, "judge": JudgeSettings, "retry": RetryPolicy,
        "judges": Judges, "execution": Execution, "outputs": Outputs}

    model: ModelSettings
    inputs: InputSources = InputSources()
    judge: JudgeSettings = JudgeSettings()
    retry: RetryPolicy = RetryPolicy()
    judges: Judges = Judges()
    execution: Execution = Execution()
    outputs: Outputs = Outputs()

    def __post_init__(self) -> None:
        # What needs another setting is refused here, whoever built the spec (the API, eval's options, a script).
        if self.outputs.view and self.outputs.out is None:
            raise SettingError("view=True (--view) writes OUT/view: give out= too (--out)")
        if self.inputs.gold is not None and not self.outputs.baselines:
            raise SettingError("gold (--gold): only the baselines read it; give baselines=True too "
                               "(--with-baselines), or leave it out")
        execution = self.execution
        if self.judges.panel and (execution.batch or execution.ray is not None):
            raise ConfigurationError("a panel of judges asks its judges from this process: drop --batch and --ray "
                                     "(each judge's answers are cached: a panel rerun after a batch run is free)")
        if execution.batch:
            from judge.llm.batch import check_batch

            check_batch(self.model, execution.ray)
        if execution.max_cost is not None and execution.price_per_1k is None:
            from judge.llm.pricing import price_known

            if not price_known(self.model.model):
                raise SettingError(f"max_cost: litellm has no price for {self.model.model!r}, so the budget cannot "
                                   "be enforced; give price_per_1k (USD per 1,000 tokens; --price-per-1k)")

    def resolve(self) -> EvalPlan:
        """What the run does, decided once: the model settings as the judge applies them (each one it cannot apply
        said in `unapplied`), the thresholds this judge gets, the Ray workers, the calls in flight."""
        from judge.judging.thresholds import check_confidence_for, default_thresholds
        from judge.llm.applied import applied_settings
        from judge.llm.batch import MAX_REQUESTS
        from judge.run.executors import unapplied_ray_options

        # Each judge of a panel applies what its model can, as it would alone; the panel signs as its first judge.
        members = self.judges.panel
        applied = [applied_settings(model) for model in [member.model for member in members] or [self.model]]
        panel = tuple(replace(member, model=settings) for member, (settings, _) in zip(members, applied))
        model = applied[0][0]
        notes = [note for _, said in applied for note in said]
        workers = self.execution.workers
        ray_notes = unapplied_ray_options(self.execution.ray, workers, model)
        if ray_notes:  # said to be ignored, so ignored: the local runtime would size llama.cpp's threads by it
            workers = None
        # The one place a run's default thresholds are decided: the judge's, or the first judge's of a panel (each
        # judge of a panel gets its own, as it would alone: judge.judging.panel.member_thresholds).
        judge, notice = default_thresholds(model, replace(self.judge, prompts_dir=panel[0].prompts_dir)
                                           if panel else self.judge)
        check_confidence_for(model, judge)              # on the model as applied: a provider may drop logprobs
        return EvalPlan(model=model, judge=judge, retry=self.retry, execution=self.execution, outputs=self.outputs,
                        unapplied=tuple(dict.fromkeys([*notes, *ray_notes])), thresholds_notice=notice, workers=workers,
                        panel=panel, vote=self.judges.vote or DEFAULT_VOTE, asked_judge=self.judge,
                        in_flight=MAX_REQUESTS if self.execution.batch else self.execution.concurrency)


@dataclass(frozen=True)
class EvalPlan:
    """A resolved spec: what the run executes (judge.run.evaluate). Built by `EvalSpec.resolve`, never by hand. Its
    inputs are not in it: a plan goes to every Ray worker, the inputs stay with the driver."""

    model: ModelSettings            # as the judge applies it (judge.llm.applied)
    judge: JudgeSettings            # thresholds resolved (never DEFAULT_THRESHOLDS)
    retry: RetryPolicy
    execution: Execution
    outputs: Outputs
    unapplied: tuple[str, ...]      # each setting the judge could not apply, a sentence (run-summary.json)
    thresholds_notice: str          # which default thresholds the judge got, or why none ("" when given or none)
    workers: int | None             # Ray workers, once the embedded judge's are said to be ignored
    in_flight: int                  # decisions let wait at once: a whole batch job's worth with batch jobs
    panel: tuple[PanelMember, ...]  # a panel of judges, each asked with its own settings and prompts (or none)
    vote: Vote
    asked_judge: JudgeSettings      # the judging asked for: each judge of a panel resolves its own thresholds

    def __post_init__(self) -> None:
        if self.judge.thresholds is DEFAULT_THRESHOLDS:  # pragma: no cover - a contract of resolve()
            raise TypeError("an EvalPlan holds resolved thresholds: build it with EvalSpec.resolve()")

    # The execution settings the run reads, by their names.
    concurrency = property(lambda self: self.execution.concurrency)
    cache = property(lambda self: self.execution.cache)
    max_cost = property(lambda self: self.execution.max_cost)
    price_per_1k = property(lambda self: self.execution.price_per_1k)
    max_failed_fraction = property(lambda self: self.execution.max_failed_fraction)
    resume = property(lambda self: self.execution.resume)
    shard = property(lambda self: self.execution.shard)
    ray = property(lambda self: self.execution.ray)
    batch = property(lambda self: self.execution.batch)
    batch_poll = property(lambda self: self.execution.batch_poll)

