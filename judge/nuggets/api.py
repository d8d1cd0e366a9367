"""The Python API of nugget creation and pooling (re-exported by judge.api):

    judge.create_nuggets(requests=..., docs=..., out=...)        banks from documents     (argue-judge nuggets create)
    judge.pool_nuggets(nuggets=..., reports=..., requests=..., docs=..., out=...)
                                                                  candidate answers        (argue-judge nuggets pool)
    judge.accept_candidates(nuggets=..., candidates=..., out=...) the extended banks       (nuggets pool --accept)

Each has an `*_async` twin; the sync calls work inside a running event loop (a notebook) by running in a thread of
their own. Their settings are checked first, by the rules the CLI's options read (judge.nuggets.settings,
ModelSettings): a value the CLI refuses is a ValueError or TypeError naming the argument here, before any input is
read. Each holds the output lock of the folder it writes (judge.formats.lock: a second command writing it at once
is refused). Files written: banks (v3 `nuggets_<request>.v3.json`, or nuggetizer `nuggets.jsonl`) and, beside
them, `<out>.review.jsonl` (every drafted answer, every binding asked, why anything was dropped) and
`<out>.summary.json` (signature, calls and seconds per request); for pooling, the candidates JSONL with
`<out>.refused.jsonl` and `<out>.summary.json`. Every one of them is named, checked and written by
judge.formats.paths, before any model is asked: names from ids inside `out`, nothing where an input lives, nothing
over a file the command did not write itself (its record: `.argue-written` in the folder it locks).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from judge._version import __version__
from judge.errors import InputError
from judge.event_loop import run_sync
from judge.formats import DocumentStore, read_nugget_banks, read_reports, read_requests
from judge.formats._jsonl import expand_paths, iter_jsonl
from judge.formats.atomic import WorkingFolder
from judge.formats.doc_lists import read_doc_lists
from judge.formats.lock import output_lock
from judge.formats.nugget_writer import AnswerKey, read_provenance, write_nuggetizer_banks, write_v3_banks
from judge.formats.paths import Outputs, beside, check_apart
from judge.llm.cache.backends import docstore_dir
from judge.llm.cache.store import DEFAULT_CACHE_DIR, open_decision_cache
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.nuggets.settings import BankFormat, NuggetSettings
from judge.settings import (
    DEFAULT_THRESHOLDS,
    DefaultThresholds,
    JudgeSettings,
    ModelSettings,
    PassagePolicy,
    Thresholds,
)
from judge.types import NuggetBank

PathLike = str | Path
T = TypeVar("T")
# Drafting writes several nuggets per call: eval's 512 tokens cut a five-nugget draft short.
CREATE_MAX_TOKENS = 1024

__all__ = ["CreatedNuggets", "PooledNuggets", "accept_candidates", "create_nuggets", "create_nuggets_async",
           "pool_nuggets", "pool_nuggets_async"]


@dataclass(frozen=True)
class CreatedNuggets:
    """What `create_nuggets` returns: the banks, the review rows, the signature, and per request the decisions
    asked (`calls`: asked, answered by the model, failed) and seconds taken; with `batch=True`, what the batch jobs
    did (`batch`: judge.llm.batch.RoundStats.as_dict())."""

    banks: dict[str, NuggetBank]
    review: list[dict[str, Any]]
    signature: str
    calls: dict[str, dict[str, Any]]
    seconds: dict[str, float]
    statements: dict[AnswerKey, str] = field(repr=False, default_factory=dict)
    written: list[Path] = field(default_factory=list)
    batch: dict[str, Any] | None = None


@dataclass(frozen=True)
class PooledNuggets:
    """What `pool_nuggets` returns: the candidates (each with `"accept": null` for a person to set), the answers
    refused (no cited document attests them), the counts and the signature; with `batch=True`, what the batch jobs
    did."""

    candidates: list[dict[str, Any]]
    refused: list[dict[str, Any]]
    counts: dict[str, int]
    calls: dict[str, Any]
    signature: str
    batch: dict[str, Any] | None = None


# judge.nuggets.calls, .create and .pool load the model client: they are imported by the calls that judge, so
# `import judge` (which re-exports these functions) stays light.


def _client(settings: ModelSettings, cache: Any, nugget: NuggetSettings, home: Path | None) -> tuple[Any, Any]:
    """The decision client; with `nugget.batch`, it asks through provider batch jobs, whose rounds are returned
    beside it, journalled in the working folder of `home` (the folder the command writes, None: no journal)."""
    from judge.llm.batch import JOURNAL, MAX_REQUESTS, BatchJobs
    from judge.llm.client import DecisionClient

    if not nugget.batch:
        return DecisionClient(settings, cache, concurrency=nugget.concurrency), None
    journal = WorkingFolder(home).file(JOURNAL) if home is not None else None
    rounds = BatchJobs(nugget.batch_poll, journal).rounds(settings)
    # Every question waiting at once joins the round: a job's worth in flight, not `concurrency`.
    return DecisionClient(settings, cache, concurrency=MAX_REQUESTS, completions=rounds.acompletion), rounds


def _check_batch(settings: NuggetSettings, model: ModelSettings) -> None:
    if settings.batch:
        from judge.llm.batch import check_batch

        check_batch(model)


def _signature(command: str, settings: ModelSettings, decisions: tuple[str, ...], prompts_dir: Path | None,
               tag: str, thresholds: Thresholds | None = None) -> str:
    from judge.judging.fingerprints import prompt_hashes, prompts_tag

    applied = f"|thr:{thresholds.digest}" if thresholds is not None else ""
    prompts = prompts_tag(prompt_hashes(prompts_dir, decisions))
    return (f"argue-judge:{__version__}|judge:{settings.model}|t={settings.temperature}|seed={settings.seed}|"
            f"max-tokens={settings.max_tokens}|{command}:{prompts}|{tag}{applied}")


def _thresholds(model: ModelSettings, thresholds: Thresholds | DefaultThresholds | None,
                prompts_dir: PathLike | None) -> Thresholds | None:
    """eval's decision thresholds for this judge (the shipped rules for the embedded judge by default, none for
    another model): the embedded judge says "supported" to nearly every claim, and only its calibrated threshold
    on the verdict's confidence separates them, so a binding without it would not be eval's verdict."""
    from judge.judging.thresholds import check_confidence_for, resolve_thresholds

    judge = JudgeSettings(prompts_dir=Path(prompts_dir) if prompts_dir is not None else None, thresholds=thresholds)
    check_confidence_for(model, judge)
    return resolve_thresholds(model, judge).thresholds  # type: ignore[return-value]


def _check_paths(optional: tuple[str, ...] = (), **arguments: Any) -> None:
    """These calls read files: a TypeError naming the argument unless it is a path (str or Path) or a list of
    paths (None only where `optional`), a ValueError for an empty list; before any work."""
    for name, value in arguments.items():
        if (value is None and name in optional) or isinstance(value, str | Path):
            continue
        if isinstance(value, list | tuple) and all(isinstance(v, str | Path) for v in value):
            if not value:
                raise ValueError(f"{name} is empty: give a path or a list of paths")
            continue
        raise TypeError(f"{name} must be a path (str or Path) or a list of paths, not {type(value).__name__} "
                        f"{value!r:.60}")


def _paths(value: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if value is None:
        return []
    return [Path(value)] if isinstance(value, str | Path) else [Path(v) for v in value]


def _create_inputs(requests: PathLike, docs: PathLike | Sequence[PathLike], doc_lists: PathLike | None,
                   gold_report: PathLike | Sequence[PathLike] | None) -> dict[str, list[Path]]:
    return {"requests": _paths(requests), "documents": _paths(docs), "doc-lists": _paths(doc_lists),
            "reports": _paths(gold_report)}


def _created_outputs(out: Path, inputs: dict[str, list[Path]], bank_format: BankFormat, banks: dict[str, NuggetBank],
                     queries: dict[str, str], statements: dict[AnswerKey, str], provenance: dict[AnswerKey, str],
                     creator: dict[str, Any], review: str, summary: str) -> tuple[Outputs, list[Path]]:
    """Every file creation writes, by judge.formats.paths (so a check of them before any model call, with the
    requests' empty banks, refuses what the write would)."""
    outputs = Outputs(home=out, command="nuggets create", out=out, inputs=inputs)
    if bank_format == "v3":
        written = write_v3_banks(outputs, out, banks, provenance, creator)
    else:
        written = write_nuggetizer_banks(outputs, out, banks, queries, statements)
    written.append(outputs.add(beside(out, ".review.jsonl"), review))
    outputs.add(beside(out, ".summary.json"), summary)
    return outputs, written


async def create_nuggets_async(*, requests: PathLike, docs: PathLike | Sequence[PathLike],
                               out: PathLike | None = None, doc_lists: PathLike | None = None,
                               gold_report: PathLike | Sequence[PathLike] | None = None, max_nuggets: int = 10,
                               max_docs: int | None = None, per_document: int = 5, format: BankFormat = "v3",
                               model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
                               cache: PathLike | None = str(DEFAULT_CACHE_DIR), concurrency: int = 4,
                               prompts_dir: PathLike | None = None, passages: PassagePolicy | None = None,
                               thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS,
                               batch: bool = False, batch_poll: float = 30.0,
                               **model_options: Any) -> CreatedNuggets:
    """Create a nugget bank per request from its documents (see judge.nuggets.create for the steps).

    `requests`: the requests file; `docs`: the documents; `doc_lists`: which documents belong to which request
    (a TREC run, qrels or JSONL; without it every document is every request's); `gold_report`: reports whose
    sentences are drafted from too (they attest nothing); `max_nuggets` (K), `max_docs` (M: the top documents by
    the relevance decision); `format`: the banks' layout when `out` is given; `thresholds`: eval's decision
    thresholds for the bindings (default: the judge's own, as eval applies them; None: the model's verdicts);
    `batch`: ask through the provider's batch jobs, polled every `batch_poll` seconds, journalled under `out` so
    that a call killed and made again polls its jobs instead of paying twice (docs/batch.md)."""
    _check_paths(("out", "doc_lists", "gold_report"), requests=requests, docs=docs, out=out, doc_lists=doc_lists,
                 gold_report=gold_report)
    settings = NuggetSettings(max_nuggets=max_nuggets, max_docs=max_docs, per_document=per_document,
                              concurrency=concurrency, format=format, passages=passages or PassagePolicy(),
                              batch=batch, batch_poll=batch_poll)
    model_settings = ModelSettings(model, api_base, api_key, **{"max_tokens": CREATE_MAX_TOKENS, **model_options})
    _check_batch(settings, model_settings)
    rules = _thresholds(model_settings, thresholds, prompts_dir)
    out_path = Path(out) if out is not None else None
    if out_path is None:
        return await _create(requests, docs, doc_lists, gold_report, settings, model_settings, rules, cache,
                             prompts_dir, None)
    inputs = _create_inputs(requests, docs, doc_lists, gold_report)
    # before the lock file is made in it: the folder, its side files, a bank in it that is not this command's
    check_apart([out_path], inputs, folders=True)
    _created_outputs(out_path, inputs, settings.format, {}, {}, {}, {}, {}, "", "")[0].check()
    with output_lock(out_path, "nuggets create"):
        return await _create(requests, docs, doc_lists, gold_report, settings, model_settings, rules, cache,
                             prompts_dir, out_path)


async def _create(requests: PathLike, docs: PathLike | Sequence[PathLike], doc_lists: PathLike | None,
                  gold_report: PathLike | Sequence[PathLike] | None, settings: NuggetSettings,
                  model_settings: ModelSettings, rules: Thresholds | None, cache: PathLike | None,
                  prompts_dir: PathLike | None, out_path: Path | None) -> CreatedNuggets:
    from judge.judging.decisions.asker import Decider
    from judge.nuggets.create import CREATION_DECISIONS, create_request, documents_of

    reqs = read_requests(requests)
    lists = read_doc_lists(doc_lists) if doc_lists is not None else None
    if lists is not None:
        unknown = sorted(set(lists) - set(reqs))
        if unknown:
            raise InputError(f"documents listed for unknown request {unknown[0]!r}; give it in the requests file",
                             str(doc_lists))
        reqs = {rid: r for rid, r in reqs.items() if rid in lists}
    inputs = _create_inputs(requests, docs, doc_lists, gold_report)
    queries = {rid: r.problem_statement for rid, r in reqs.items()}
    if out_path is not None:  # the files this run will write, checked before any model call
        empty = {rid: NuggetBank(request_id=rid, nuggets=()) for rid in reqs}
        _created_outputs(out_path, inputs, settings.format, empty, queries, {}, {}, {}, "", "")[0].check()
    gold: dict[str, list[Any]] = {}
    for report in read_reports(_paths(gold_report)) if gold_report is not None else []:
        gold.setdefault(report.request_id, []).append(report)
    prompts = Path(prompts_dir) if prompts_dir is not None else None
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        index = docstore_dir(cache)
        with DocumentStore.open(_paths(docs), index) as store:
            all_ids = [str(row["doc_id"]) for path in expand_paths(_paths(docs)) for _, row in iter_jsonl(path)
                       if "doc_id" in row] if lists is None else []
            documents = documents_of(list(reqs), lists, all_ids, store, str(doc_lists or docs))
            client, rounds = _client(model_settings, decision_cache, settings, out_path)
            decider = Decider(client, prompts, rules)
            if rounds is None:
                made = [await create_request(reqs[rid], documents[rid], decider, settings, gold.get(rid, []))
                        for rid in reqs]
            else:  # every request's questions in the same rounds
                made = list(await asyncio.gather(*(create_request(reqs[rid], documents[rid], decider, settings,
                                                                  gold.get(rid, [])) for rid in reqs)))
    finally:
        if decision_cache is not None:
            decision_cache.close()
    batch = rounds.stats.as_dict() if rounds is not None else None
    signature = _signature("create", client.settings, CREATION_DECISIONS, prompts, settings.tag, rules)
    banks = {m.bank.request_id: m.bank for m in made}
    statements = {k: v for m in made for k, v in m.statements.items()}
    created = CreatedNuggets(
        banks=banks, review=[row for m in made for row in m.review], signature=signature,
        calls={m.bank.request_id: {"asked": m.calls.asked, "answered": m.calls.answered, "failed": m.calls.failed,
                                   **m.calls.by_decision} for m in made},
        seconds={m.bank.request_id: round(m.seconds, 3) for m in made}, statements=statements, batch=batch)
    if out_path is None:
        return created
    provenance = {(rid, n.nugget_id, a.text): "created" for rid, b in banks.items() for n in b.nuggets
                  for a in n.answers}
    creator = {"tool": "argue-judge nuggets create", "signature": signature}
    review = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in created.review)
    summary = {"signature": signature, "banks": {rid: len(b.nuggets) for rid, b in banks.items()},
               "calls": created.calls, "seconds": created.seconds, **({"batch": batch} if batch else {})}
    outputs, written = _created_outputs(out_path, inputs, settings.format, banks, queries, statements, provenance,
                                        creator, review, json.dumps(summary, indent=2) + "\n")
    outputs.write()
    if rounds is not None:
        rounds.journal.forget()  # written: the jobs are done with
    return CreatedNuggets(**{**created.__dict__, "written": written})


def create_nuggets(**kwargs: Any) -> CreatedNuggets:
    """`create_nuggets_async`, run to its end (also from inside a running event loop)."""
    return run_sync(create_nuggets_async(**kwargs))


# help() and the generated reference show the arguments of the async twin this runs
create_nuggets.__signature__ = inspect.signature(create_nuggets_async)  # type: ignore[attr-defined]


async def pool_nuggets_async(*, nuggets: PathLike | Sequence[PathLike], reports: PathLike | Sequence[PathLike],
                             requests: PathLike, docs: PathLike | Sequence[PathLike], out: PathLike | None = None,
                             model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
                             cache: PathLike | None = str(DEFAULT_CACHE_DIR), concurrency: int = 4,
                             prompts_dir: PathLike | None = None, passages: PassagePolicy | None = None,
                             thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS,
                             batch: bool = False, batch_poll: float = 30.0,
                             **model_options: Any) -> PooledNuggets:
    """Candidate new answers to the banks' questions from the reports' cited sentences (judge.nuggets.pool).
    Nothing changes a bank: `out` gets the candidates (each `"accept": null`) for a person to review, then
    `accept_candidates`. `thresholds`, `batch` and `batch_poll`: as in `create_nuggets` (the batch journal is kept
    in the folder of `out`)."""
    _check_paths(("out",), nuggets=nuggets, reports=reports, requests=requests, docs=docs, out=out)
    settings = NuggetSettings(concurrency=concurrency, passages=passages or PassagePolicy(), batch=batch,
                              batch_poll=batch_poll)
    model_settings = ModelSettings(model, api_base, api_key, **model_options)
    _check_batch(settings, model_settings)
    rules = _thresholds(model_settings, thresholds, prompts_dir)
    if out is None:
        return await _pool(nuggets, reports, requests, docs, settings, model_settings, rules, cache, prompts_dir,
                           None)
    out_path = Path(out)
    outputs = pooled_outputs(out_path, nuggets, reports, requests, docs)
    check_apart(list(outputs.texts), outputs.inputs)  # before the lock file is made beside them
    with output_lock(out_path.parent, "nuggets pool"):
        outputs.check()
        return await _pool(nuggets, reports, requests, docs, settings, model_settings, rules, cache, prompts_dir,
                           out_path)


async def _pool(nuggets: PathLike | Sequence[PathLike], reports: PathLike | Sequence[PathLike], requests: PathLike,
                docs: PathLike | Sequence[PathLike], settings: NuggetSettings, model_settings: ModelSettings,
                rules: Thresholds | None, cache: PathLike | None, prompts_dir: PathLike | None,
                out_path: Path | None) -> PooledNuggets:
    from judge.judging.decisions.asker import Decider
    from judge.nuggets.pool import POOL_DECISIONS, check_banks, pool

    banks = read_nugget_banks(_paths(nuggets))
    reqs = read_requests(requests)
    check_banks(banks, reqs, ", ".join(map(str, _paths(nuggets))))
    runs = read_reports(_paths(reports))
    prompts = Path(prompts_dir) if prompts_dir is not None else None
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        index = docstore_dir(cache)
        with DocumentStore.open(_paths(docs), index) as store:
            client, rounds = _client(model_settings, decision_cache, settings,
                                     out_path.parent if out_path is not None else None)
            pooled = await pool(runs, banks, reqs, store, Decider(client, prompts, rules), settings)
    finally:
        if decision_cache is not None:
            decision_cache.close()
    batch = rounds.stats.as_dict() if rounds is not None else None
    signature = _signature("pool", client.settings, POOL_DECISIONS, prompts, settings.pool_tag, rules)
    result = PooledNuggets(pooled.candidates, pooled.refused, pooled.counts.as_dict(),
                           {"asked": pooled.calls.asked, "answered": pooled.calls.answered,
                            "failed": pooled.calls.failed, **pooled.calls.by_decision}, signature, batch)
    if out_path is not None:
        outputs = pooled_outputs(out_path, nuggets, reports, requests, docs)
        outputs.add(out_path, "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in result.candidates))
        outputs.add(beside(out_path, ".refused.jsonl"),
                    "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.refused))
        outputs.add(beside(out_path, ".summary.json"), json.dumps(
            {"signature": signature, "candidates": len(result.candidates), "counts": result.counts,
             "calls": result.calls, **({"batch": batch} if batch else {})}, indent=2) + "\n")
        outputs.write()
    if rounds is not None:
        rounds.journal.forget()  # the jobs are done with
    return result


POOL_FILES = {"candidates": "", "refused": ".refused.jsonl", "summary": ".summary.json", "page": ".html"}


def pooled_outputs(out: Path, nuggets: PathLike | Sequence[PathLike], reports: PathLike | Sequence[PathLike],
                   requests: PathLike, docs: PathLike | Sequence[PathLike],
                   files: Sequence[str] = ("candidates", "refused", "summary")) -> Outputs:
    """The files pooling writes (judge.formats.paths), each with an empty text for the caller to replace: the
    candidates file `out` and beside it `.refused.jsonl`, `.summary.json` and the command's `.html` page. Built
    once to be checked before any model call, and again to be written."""
    inputs = {"nuggets": _paths(nuggets), "reports": _paths(reports), "requests": _paths(requests),
              "documents": _paths(docs)}
    outputs = Outputs(home=Path(out).parent, command="nuggets pool", out=Path(out), inputs=inputs)
    for name in files:
        outputs.add(beside(out, POOL_FILES[name]) if POOL_FILES[name] else Path(out), "")
    return outputs


def pool_nuggets(**kwargs: Any) -> PooledNuggets:
    """`pool_nuggets_async`, run to its end (also from inside a running event loop)."""
    return run_sync(pool_nuggets_async(**kwargs))


# help() and the generated reference show the arguments of the async twin this runs
pool_nuggets.__signature__ = inspect.signature(pool_nuggets_async)  # type: ignore[attr-defined]


def accept_candidates(*, nuggets: PathLike | Sequence[PathLike], candidates: PathLike, out: PathLike
                      ) -> dict[str, NuggetBank]:
    """The banks extended by the candidates a person marked `"accept": true` (each one needs true or false),
    written to `out` as v3 banks: the added answers `pooled`, the others keep their provenance (`person` when the
    bank recorded none). `out` must hold no bank (nor other file a bank reader would take) that this call did not
    write itself, and lie apart from the inputs (judge.formats.paths)."""
    from judge.nuggets.pool import accept

    _check_paths(nuggets=nuggets, candidates=candidates, out=out)
    sources = _paths(nuggets)
    out_path = Path(out)
    inputs = {"nuggets": sources, "candidates": _paths(candidates)}
    check_apart([out_path], inputs, folders=True)
    preflight = Outputs(home=out_path, command="nuggets pool --accept", out=out_path, inputs=inputs)
    preflight.bank_folder(out_path)
    preflight.check()  # before the lock file is made in it
    with output_lock(out_path, "nuggets pool --accept"):
        banks = read_nugget_banks(sources)
        reviewed = [(line, row) for line, row in iter_jsonl(Path(candidates))]
        extended, added = accept(banks, reviewed, str(candidates))
        provenance: dict[AnswerKey, str] = dict(read_provenance(sources))
        provenance.update(dict.fromkeys(added, "pooled"))
        outputs = Outputs(home=out_path, command="nuggets pool --accept", out=out_path, inputs=inputs)
        write_v3_banks(outputs, out_path, extended, provenance)
        outputs.write()
    return extended
