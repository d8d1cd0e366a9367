"""`calibrate`: how far each judge decision agrees with human labels, as `argue-judge calibrate` does."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import InstanceOf

from judge.api._inputs import (
    DEFAULT_CACHE,
    DocumentInputs,
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    _check_input,
    _check_judge,
    _check_path,
    _given,
    _humans,
    _is_paths,
    _paths,
)
from judge.diagnostics import Diagnostics
from judge.errors import SettingError
from judge.formats.judgments import ReportJudgment
from judge.labels import DEFAULT_VOTE
from judge.llm.cache.backends import docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.llm.panel import PanelMember, check_panel  # imports no model client
from judge.settings import Flag, JudgeSettings, ModelSettings, Seconds, Text, Thresholds, check, check_field
from judge.types import Document, NuggetBank

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.calibration.report import CalibrationResults
    from judge.calibration.sources import ItemSources, SampleSize
    from judge.calibration.suite import CalibrationConfig


@contextmanager
def calibration_config(model: ModelSettings, judge: JudgeSettings | None, sources: ItemSources, *,
                       cache: PathLike | None = DEFAULT_CACHE, sample: SampleSize | None = None, seed: int = 0,
                       n_boot: int = 1000, concurrency: int = 4, **run_options: Any) -> Iterator[CalibrationConfig]:
    """The run configuration of `calibrate` and of `argue-judge calibrate`, its decision cache open until the
    `with` block ends. `judge`: None for calibrate's default judging. `sources`: the data sets the items come from.
    `cache`: a directory or redis://..., None for none. `run_options`: the other fields of
    `judge.calibration.suite.CalibrationConfig` (against, exclude, attacks, fit_metric)."""
    from judge.calibration.suite import CalibrationConfig
    from judge.llm.cache.store import open_decision_cache

    _check_judge(judge)
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        yield CalibrationConfig.resolved(model=model, judge=judge or JudgeSettings(), concurrency=concurrency,
                                cache=decision_cache, n_boot=n_boot, seed=seed, sample=sample,
                                wice_partial=sources.wice_partial if sources.wice else None, **run_options)
    finally:
        if decision_cache is not None:
            decision_cache.close()


CALIBRATED_POLICIES = ("quarantine", "flag")  # 'penalise' decides flagged sentences without asking the model


@dataclass
class CalibrationProgress:
    """Callbacks as calibration goes (the CLI hands in its progress bar): `start(total)` once the items are
    loaded, `item_done()` after each answer."""

    start: Callable[[int], None] = lambda total: None
    item_done: Callable[[], None] = lambda: None


def choose_attacks(names: str | Sequence[Any] | None, attacks_file: PathLike | None = None) -> tuple[Any, ...]:
    """Attack kinds by name, in the order given ("kind,kind", or a list; Attack objects are taken as they are).
    With `attacks_file`, the kinds of that file ('all': every one, in its order); without, the bundled kinds ('all')
    and the held-out ones ('unseen'), each also by name. ValueError on an unknown kind."""
    from judge.defence.injection import UNSEEN_ATTACKS_FILE, Attack, load_attacks

    if not isinstance(names, str) and names is not None and all(isinstance(n, Attack) for n in names):
        return tuple(names)  # chosen already (an empty sequence: no red team)
    if names is None:
        if attacks_file is not None:
            raise SettingError("an attacks file needs attack kinds (KIND[,KIND...] or 'all')")
        return ()
    sets = {"all": load_attacks(Path(attacks_file))} if attacks_file is not None else \
        {"all": load_attacks(), "unseen": load_attacks(UNSEEN_ATTACKS_FILE)}
    known = {kind: attack for kinds in sets.values() for kind, attack in kinds.items()}
    given = names.split(",") if isinstance(names, str) else list(names)
    # A set's name stands for its kinds, in the set's order: "unseen,assessor_note" is every held-out kind and one more.
    wanted = [kind for n in given if n.strip() for kind in (sets[n.strip()] if n.strip() in sets else [n.strip()])]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        raise SettingError(f"unknown attack kind(s) {', '.join(unknown) or '(none given)'}; choose "
                         f"{' or '.join(repr(s) for s in sets)} or some of {', '.join(known)}")
    return tuple(known[n] for n in dict.fromkeys(wanted))


def calibrate(*, attributionbench: PathLike | None = None, wice: PathLike | None = None, wice_partial: str = "strict",
              nuggets: NuggetInputs | None = None, docs: DocumentInputs | None = None,
              human: JudgmentInputs | None = None, judged: JudgmentInputs | None = None, sample: str | None = None,
              exclude: PathLike | None = None,
              seed: int = 0, model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
              judge: JudgeSettings | None = None, against: PathLike | None = None,
              attacks: str | Sequence[str] | None = None, attacks_file: PathLike | None = None,
              fit_metric: str | None = None, cache: PathLike | None = DEFAULT_CACHE, n_boot: int = 1000,
              concurrency: int = 4, out: PathLike | None = None, plots: bool = False,
              progress: CalibrationProgress | None = None, batch: bool = False, batch_poll: float = 30.0,
              panel: Sequence[PanelMember] | None = None, vote: str | None = None,
              **model_options: Any) -> CalibrationResults:
    """How far each judge decision agrees with human labels, as `argue-judge calibrate` does: AttributionBench and
    WiCE (supports_citation) and nugget banks with their documents (answers_nugget: `nuggets` and `docs` as paths, or
    NuggetBank and Document objects or dicts in their file format, read as they are); `human` with `judged` (the
    judge's judgments of the same reports) compares them decision by decision and report by report.
    `wice_partial`: what WiCE's partially_supported is ('strict': not supported, 'exclude', 'separate'). `sample`:
    "40" or "attributionbench=200,wice=150". `exclude`: items to leave out (an items.jsonl or ids). `against`: an
    old prompt directory to compare with the judge's (McNemar). `attacks` (with `attacks_file`): the red team's
    attack kinds. `fit_metric`: fit a confidence threshold per decision maximising it ('kappa', ...). `out`: also
    write calibration.md/.html/.json (and with `plots` the figures, with `fit_metric` the thresholds file) there;
    `results.files` lists them. `batch`: ask the items through the provider's batch jobs, polled every
    `batch_poll` seconds and journalled under `out`, so that a call killed and made again polls its jobs instead
    of paying twice (docs/batch.md; `results.batch` says what the jobs did). `panel`: a panel of judges
    (judge.llm.panel.PanelMember, each a model with its own server and prompt directory) asked instead of `model`,
    with `vote` ('majority' by default, 'unanimous', 'any'); `results.judges` then has each judge against the human
    labels and `results.panel` the agreement among them. Safe inside a running event loop; `calibrate_async` is the
    awaitable twin.

    >>> import judge
    >>> from judge.testing import FakeEndpoint, smart_responder
    >>> with FakeEndpoint(smart_responder) as model:
    ...     results = judge.calibrate(nuggets="examples/nuggets", docs="examples/docs.jsonl", model="openai/fake",
    ...                               api_base=model.api_base, api_key="none", cache=None, n_boot=200)
    >>> agreement = results.decisions["answers_nugget"]
    >>> agreement.n > 0 and 0.0 <= agreement.accuracy <= 1.0
    True
    """
    from judge.calibration.redteam import attacked_count
    from judge.calibration.report import write_calibration_report
    from judge.calibration.report_confidence import THRESHOLDS_NAME
    from judge.calibration.sources import WICE_PARTIAL_POLICIES, Exclusion, ItemSources, SampleSize, load_items
    from judge.calibration.stats import FIT_METRICS
    from judge.calibration.suite import CalibrationConfig, check_calibrated_judge, write_thresholds
    from judge.calibration.suite import calibrate as run_calibration
    from judge.errors import InputError
    from judge.run.score import score as score_records

    check("wice_partial", wice_partial, Literal[WICE_PARTIAL_POLICIES])
    check("fit_metric", fit_metric, Literal[FIT_METRICS] | None)
    check("plots", plots, Flag)
    check("batch", batch, Flag)
    check("batch_poll", batch_poll, Seconds)
    for name, value in (("concurrency", concurrency), ("n_boot", n_boot), ("seed", seed)):
        check_field(CalibrationConfig, name, value)  # now, not after the items are read
    for name, value in (("attributionbench", attributionbench), ("wice", wice), ("exclude", exclude),
                        ("against", against), ("attacks_file", attacks_file), ("cache", cache), ("out", out)):
        _check_path(name, value)
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("docs", docs, Document)
    check("sample", sample, Text | None)
    check("attacks", attacks, InstanceOf[str] | InstanceOf[list] | InstanceOf[tuple] | None)
    check("progress", progress, InstanceOf[CalibrationProgress] | None)
    _check_input("human", human, ReportJudgment)
    _check_input("judged", judged, ReportJudgment)
    members = _panel_members(panel, vote, model, api_base, model_options)
    if members:  # before the items are read
        from judge.calibration.suite import check_panel_calibration

        check_panel_calibration(against is not None, fit_metric)
    settings = members[0].model if members else ModelSettings(model, api_base, api_key, **model_options)
    _check_judge(judge)
    if judge is not None:
        check("judge.on_injection", judge.on_injection, Literal[CALIBRATED_POLICIES])
    check_calibrated_judge(settings, judge or JudgeSettings(), fit_metric)  # before the items are read
    if batch:
        from judge.llm.batch import check_batch

        check_batch(settings)
    if (human is None) != (judged is None):
        raise SettingError("human and judged go together: the assessors' judgments and the judge's of the same reports")
    if attributionbench is None and wice is None and nuggets is None:
        # No item will be asked: what only the asked judge uses would be left unused without a word.
        unused = [name for name, value in (("fit_metric", fit_metric), ("against", against), ("attacks", attacks),
                                           ("batch", batch),
                                           ("judge.thresholds", isinstance((judge or JudgeSettings()).thresholds,
                                                                           Thresholds) or None)) if value]
        if unused:
            raise SettingError(f"{', '.join(unused)} apply to the judge asked about items (attributionbench=, wice=, "
                               "nuggets=), and none is given: human= with judged= compares judgments already made, "
                               "whose records sign the judge and thresholds they were made with")
    progress = progress or CalibrationProgress()
    diagnostics = Diagnostics()
    sources = ItemSources(Path(attributionbench) if attributionbench else None, Path(wice) if wice else None,
                          wice_partial,  # type: ignore[arg-type]
                          nuggets=tuple(_given("nuggets", nuggets, NuggetBank, optional=True)),
                          docs=tuple(_given("docs", docs, Document, optional=True)), index_dir=docstore_dir(cache))
    chosen_attacks = choose_attacks(attacks, attacks_file)
    sample_size = SampleSize.parse(sample) if sample is not None else None
    exclusion = Exclusion.read(Path(exclude)) if exclude is not None else None
    items = load_items(sources, sample_size, seed, diagnostics, exclusion)
    human_records: list[ReportJudgment] = []
    judged_records: list[ReportJudgment] = []
    if human is not None:
        from judge.calibration.importers import read_paired_judgments

        # records given in memory are taken as they are; files are read by read_paired_judgments
        given = [None if _is_paths(value) else _humans(name, value) for name, value in (("human", human),
                                                                                        ("judged", judged))]
        human_records, judged_records, by_file = read_paired_judgments(
            *[_paths(value) if found is None else [found.names] for found, value in zip(given, (human, judged))],
            located=tuple(None if found is None else found.located for found in given))
        for name, records in by_file.items():  # each file's own warnings, as `score FILE` gives them
            diagnostics.extend((f"{name}: {w}" for w in score_records(records, "calibration")[2]), "scores")
    if not items and not human_records:
        raise InputError("nothing to calibrate: give attributionbench=, wice=, nuggets= with docs=, or human= with "
                         "judged=")
    if not items:  # no model is asked: neither its default thresholds nor its cache come into play
        judge, cache = replace(judge or JudgeSettings(), thresholds=None), None
    with calibration_config(settings, judge, sources, cache=cache, sample=sample_size, seed=seed, n_boot=n_boot,
                            concurrency=concurrency,
                            against=JudgeSettings(prompts_dir=Path(against)) if against else None,
                            exclude=exclusion, attacks=chosen_attacks, fit_metric=fit_metric,
                            batch=_batch_jobs(batch, batch_poll, out), panel=members,
                            vote=vote or DEFAULT_VOTE) as config:
        progress.start(len(items) * (2 if against else 1) + attacked_count(items, chosen_attacks))
        results = run_calibration(items, config, human=human_records or None, judged=judged_records or None,
                                  score=lambda js: score_records(js, "calibration")[0].rows(),
                                  notes=diagnostics.messages(), on_item=progress.item_done)
    if out is not None:
        written = write_calibration_report(results, out, plots=plots)
        thresholds = write_thresholds(results, config, items, Path(out) / THRESHOLDS_NAME)
        results.files = [*written, *([thresholds] if thresholds else [])]
    if config.batch is not None:
        config.batch.done()  # every answer is in the cache: the jobs are done with
    return results


def _batch_jobs(batch: bool, poll: float, out: PathLike | None) -> Any:
    """The batch jobs of a call with `batch` (journalled in the working folder of `out`), else None."""
    if not batch:
        return None
    from judge.formats.atomic import WorkingFolder
    from judge.llm.batch import JOURNAL, BatchJobs

    return BatchJobs(poll, WorkingFolder(out).file(JOURNAL) if out is not None else None)


def _panel_members(panel: Sequence[PanelMember] | None, vote: str | None, model: str, api_base: str | None,
                   model_options: dict[str, Any]) -> tuple[PanelMember, ...]:
    """The panel's members, checked (SettingError, one line): a vote needs a panel, and a panel names its own models,
    so `model`, `api_base` and model options beside it would be left unused."""
    from judge.labels import Vote

    check("vote", vote, Vote | None)
    if panel is None:
        if vote is not None:
            raise SettingError("vote applies to a panel of judges: give panel= (two or more "
                               "judge.llm.panel.PanelMember), or drop vote")
        return ()
    check("panel", panel, InstanceOf[list] | InstanceOf[tuple])  # the members themselves: check_panel
    unused = [name for name, given in (("model", model != EMBEDDED_MODEL), ("api_base", api_base is not None),
                                       *((name, True) for name in model_options)) if given]
    if unused:
        raise SettingError(f"{', '.join(unused)}: a panel names each judge's model and server (PanelMember.model); "
                           "give them there")
    return check_panel(panel)


async def calibrate_async(**arguments: Any) -> CalibrationResults:
    """`calibrate`, awaited: the same keyword arguments. The calibration runs its own event loop in a worker thread
    (judge.event_loop.run_sync), so awaiting it leaves the caller's loop free."""
    import asyncio

    return await asyncio.to_thread(calibrate, **arguments)
