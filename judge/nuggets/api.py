"""The Python API of nugget creation and pooling (re-exported by judge.api):

    judge.create_nuggets(requests=..., docs=..., out=...)        banks from documents     (argue-judge nuggets create)
    judge.pool_nuggets(nuggets=..., reports=..., requests=..., docs=..., out=...)
                                                                  candidate answers        (argue-judge nuggets pool)
    judge.accept_candidates(nuggets=..., candidates=..., out=...) the extended banks       (nuggets pool --accept)

Each has an `*_async` twin; the sync calls work inside a running event loop (a notebook) by running in a thread of
their own. Each builds its specification from its keywords (judge.nuggets.spec: every setting checked by the
rules the CLI's options read, so a value the CLI refuses is a ValueError or TypeError naming the argument here,
before any input is read), resolves it once, and holds the output lock of the folder it writes once, from the first
check to the last rename (judge.formats.lock: a second command writing it at once is refused). Files written: banks
(v3 `nuggets_<request>.v3.json`, or nuggetizer `nuggets.jsonl`) and, beside them, `<out>.review.jsonl` (every
drafted answer, every binding asked, why anything was dropped) and `<out>.summary.json` (signature, calls and
seconds per request); for pooling, the candidates JSONL with `<out>.refused.jsonl`, `<out>.summary.json` and, with
`page`, `<out>.html`. Every one of them is named, checked and written by
judge.formats.paths, before any model is asked: names from ids inside `out`, nothing where an input lives, nothing
over a file the command did not write itself (its record: `.argue-written` in the folder it locks).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from judge._version import __version__
from judge.errors import InputError
from judge.event_loop import run_sync
from judge.formats import loader
from judge.formats._jsonl import expand_paths, iter_jsonl
from judge.formats.atomic import WorkingFolder
from judge.formats.doc_lists import read_doc_lists
from judge.formats.loader import DocumentInputs, NuggetInputs, ReportInputs, RequestInputs
from judge.formats.lock import output_lock
from judge.formats.nugget_writer import (
    AnswerKey,
    provenance_in,
    read_provenance,
    write_nuggetizer_banks,
    write_v3_banks,
)
from judge.formats.paths import Outputs, beside, check_apart
from judge.llm.cache.backends import docstore_dir
from judge.llm.cache.store import DEFAULT_CACHE_DIR, open_decision_cache
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.nuggets.settings import BankFormat
from judge.nuggets.spec import AcceptSpec, CreateInputs, CreateSpec, NuggetPlan, PathLike, PoolInputs, PoolSpec
from judge.settings import DEFAULT_THRESHOLDS, DefaultThresholds, ModelSettings, PassagePolicy, Thresholds
from judge.types import Document, NuggetBank, Report, Request

S = TypeVar("S")

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
    thresholds_notice: str = ""   # which default thresholds the bindings got, or why none ("" when given or none)


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
    thresholds_notice: str = ""   # as CreatedNuggets'
    page: Path | None = None      # the review page written beside the candidates (with `page`)


# judge.nuggets.calls, .create and .pool load the model client: they are imported by the calls that judge, so
# `import judge` (which re-exports these functions) stays light.


def _spec(kind: type[S], arguments: dict[str, Any]) -> S:
    """The specification a call's keywords ask for, every setting checked by the spec's own rules. A one-pass
    iterable of records (a generator) is read into a list first, so that the spec's check and the run see it
    whole."""
    if arguments.get("passages") is None:
        arguments.pop("passages", None)  # the spec's default passages
    for name, value in arguments.items():
        if isinstance(value, Iterator):
            arguments[name] = list(value)
    return kind.of(**arguments)  # type: ignore[attr-defined, no-any-return]


def _given(name: str, value: Any, kind: type, optional: bool = False) -> list[Any]:
    """What the loader takes for input `name`: its objects (dicts read into them), or its paths."""
    return loader.given(name, value, kind, optional=optional)


def _named(value: Any, name: str) -> str:
    """An input as messages name it: its paths as given, or the argument's name for objects."""
    return ", ".join(map(str, loader.path_list(value))) if loader.is_paths(value) else name


def _client(plan: NuggetPlan, cache: Any, home: Path | None) -> tuple[Any, Any]:
    """The decision client; with batch jobs, it asks through them, whose rounds are returned beside it, journalled
    in the working folder of `home` (the folder the command writes, None: no journal)."""
    from judge.llm.batch import JOURNAL, BatchJobs
    from judge.llm.client import DecisionClient

    if not plan.execution.batch:
        return DecisionClient(plan.model, cache, concurrency=plan.in_flight), None
    journal = WorkingFolder(home).file(JOURNAL) if home is not None else None
    rounds = BatchJobs(plan.execution.batch_poll, journal).rounds(plan.model)
    return DecisionClient(plan.model, cache, concurrency=plan.in_flight, completions=rounds.acompletion), rounds


def _signature(command: str, settings: ModelSettings, decisions: tuple[str, ...], prompts_dir: Path | None,
               tag: str, thresholds: Thresholds | None = None) -> str:
    from judge.judging.fingerprints import prompt_hashes, prompts_tag

    applied = f"|thr:{thresholds.digest}" if thresholds is not None else ""
    prompts = prompts_tag(prompt_hashes(prompts_dir, decisions))
    return (f"argue-judge:{__version__}|judge:{settings.model}|t={settings.temperature}|seed={settings.seed}|"
            f"max-tokens={settings.max_tokens}|{command}:{prompts}|{tag}{applied}")


def _create_inputs(inputs: CreateInputs) -> dict[str, list[Path]]:
    """The input files an output may not be (objects have no file to collide with)."""
    return {"requests": loader.path_list(inputs.requests), "documents": loader.path_list(inputs.docs),
            "doc-lists": loader.path_list(inputs.doc_lists), "reports": loader.path_list(inputs.gold_report)}


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


async def create_nuggets_async(*, requests: RequestInputs, docs: DocumentInputs,
                               out: PathLike | None = None, doc_lists: PathLike | None = None,
                               gold_report: ReportInputs | None = None, max_nuggets: int = 10,
                               max_docs: int | None = None, per_document: int = 5, format: BankFormat = "v3",
                               model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
                               cache: PathLike | None = str(DEFAULT_CACHE_DIR), concurrency: int = 4,
                               prompts_dir: PathLike | None = None, passages: PassagePolicy | None = None,
                               thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS,
                               batch: bool = False, batch_poll: float = 30.0,
                               **model_options: Any) -> CreatedNuggets:
    """Create a nugget bank per request from its documents (see judge.nuggets.create for the steps).

    `requests`: the requests; `docs`: the documents; `gold_report`: reports whose sentences are drafted from too
    (they attest nothing). Each as paths, or as objects of judge.types or dicts in their file format, taken as they
    are (no file is written for them). `doc_lists`: which documents belong to which request (a TREC run, qrels or
    JSONL file; without it every document is every request's); `max_nuggets` (K), `max_docs` (M: the top documents
    by the relevance decision); `format`: the banks' layout when `out` is given; `thresholds`: eval's decision
    thresholds for the bindings (default: the judge's own, as eval applies them; None: the model's verdicts);
    `batch`: ask through the provider's batch jobs, polled every `batch_poll` seconds, journalled under `out` so
    that a call killed and made again polls its jobs instead of paying twice (docs/batch.md). `model_options`: the
    other fields of the call's specification (judge.nuggets.spec.CreateSpec) by name: the model's (temperature,
    seed, max_tokens, timeout, logprobs, threads, ...) and the creation's (merge_overlap, bind_share, claim_share,
    max_extra_bindings)."""
    arguments = {name: value for name, value in locals().items() if name != "model_options"}
    return await _create(_spec(CreateSpec, {**arguments, **model_options}))


def _doc_ids(docs: list[Any]) -> list[str]:
    """Every document's id, in order: the objects', or each line's of the files (as the index reads them)."""
    found = loader.objects(docs, Document)
    if found is not None:
        return [d.doc_id for d in found]
    return [str(row["doc_id"]) for path in expand_paths(docs) for _, row in iter_jsonl(path) if "doc_id" in row]


async def _create(spec: CreateSpec) -> CreatedNuggets:
    """Run `spec`: resolve it once and, holding the banks' folder from the first check to the last rename, create
    and write."""
    plan = spec.resolve()
    if spec.outputs.out is None:
        return await _created(spec, plan, None)
    out = Path(spec.outputs.out)
    inputs = _create_inputs(spec.inputs)
    # before the lock file is made in it: the folder, its side files, a bank in it that is not this command's
    check_apart([out], inputs, folders=True)
    _created_outputs(out, inputs, spec.outputs.format, {}, {}, {}, {}, {}, "", "")[0].check()
    with output_lock(out, "nuggets create"):
        return await _created(spec, plan, out)


async def _created(spec: CreateSpec, plan: NuggetPlan, out_path: Path | None) -> CreatedNuggets:
    from judge.judging.decisions.asker import Decider
    from judge.nuggets.create import CREATION_DECISIONS, create_request, documents_of

    sources = spec.inputs
    reqs = loader.requests(_given("requests", sources.requests, Request), "requests")
    lists = read_doc_lists(sources.doc_lists) if sources.doc_lists is not None else None
    if lists is not None:
        unknown = sorted(set(lists) - set(reqs))
        if unknown:
            raise InputError(f"documents listed for unknown request {unknown[0]!r}; give it in the requests file",
                             str(sources.doc_lists))
        reqs = {rid: r for rid, r in reqs.items() if rid in lists}
    inputs = _create_inputs(sources)
    bank_format = spec.outputs.format
    queries = {rid: r.problem_statement for rid, r in reqs.items()}
    if out_path is not None:  # the files this run will write, checked before any model call
        empty = {rid: NuggetBank(request_id=rid, nuggets=()) for rid in reqs}
        _created_outputs(out_path, inputs, bank_format, empty, queries, {}, {}, {}, "", "")[0].check()
    gold: dict[str, list[Any]] = {}
    for report in (loader.report_list(_given("gold_report", sources.gold_report, Report), "gold_report")
                   if sources.gold_report is not None else []):
        gold.setdefault(report.request_id, []).append(report)
    cache = plan.execution.cache
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        docs = _given("docs", sources.docs, Document)
        with loader.documents(docs, docstore_dir(cache), "docs") as store:
            documents = documents_of(list(reqs), lists, _doc_ids(docs) if lists is None else [], store,
                                     str(sources.doc_lists) if sources.doc_lists is not None
                                     else _named(sources.docs, "docs"))
            client, rounds = _client(plan, decision_cache, out_path)
            decider = Decider(client, plan.prompts_dir, plan.thresholds)

            def create(rid: str) -> Any:
                return create_request(reqs[rid], documents[rid], decider, spec.creation, gold.get(rid, []),
                                      plan.passages)

            if rounds is None:
                made = [await create(rid) for rid in reqs]
            else:  # every request's questions in the same rounds
                made = list(await asyncio.gather(*(create(rid) for rid in reqs)))
    finally:
        if decision_cache is not None:
            decision_cache.close()
    batch = rounds.stats.as_dict() if rounds is not None else None
    signature = _signature("create", plan.model, CREATION_DECISIONS, plan.prompts_dir, plan.tag, plan.thresholds)
    banks = {m.bank.request_id: m.bank for m in made}
    statements = {k: v for m in made for k, v in m.statements.items()}
    created = CreatedNuggets(
        banks=banks, review=[row for m in made for row in m.review], signature=signature,
        calls={m.bank.request_id: {"asked": m.calls.asked, "answered": m.calls.answered, "failed": m.calls.failed,
                                   **m.calls.by_decision} for m in made},
        seconds={m.bank.request_id: round(m.seconds, 3) for m in made}, statements=statements, batch=batch,
        thresholds_notice=plan.thresholds_notice)
    if out_path is None:
        return created
    provenance = {(rid, n.nugget_id, a.text): "created" for rid, b in banks.items() for n in b.nuggets
                  for a in n.answers}
    creator = {"tool": "argue-judge nuggets create", "signature": signature}
    review = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in created.review)
    summary = {"signature": signature, "banks": {rid: len(b.nuggets) for rid, b in banks.items()},
               "calls": created.calls, "seconds": created.seconds, **({"batch": batch} if batch else {})}
    outputs, written = _created_outputs(out_path, inputs, bank_format, banks, queries, statements, provenance,
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


async def pool_nuggets_async(*, nuggets: NuggetInputs, reports: ReportInputs, requests: RequestInputs,
                             docs: DocumentInputs, out: PathLike | None = None,
                             model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
                             cache: PathLike | None = str(DEFAULT_CACHE_DIR), concurrency: int = 4,
                             prompts_dir: PathLike | None = None, passages: PassagePolicy | None = None,
                             thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS,
                             batch: bool = False, batch_poll: float = 30.0,
                             **model_options: Any) -> PooledNuggets:
    """Candidate new answers to the banks' questions from the reports' cited sentences (judge.nuggets.pool).
    `nuggets`, `reports`, `requests`, `docs`: paths, or objects of judge.types or dicts in their file format (read
    as they are). Nothing changes a bank: `out` gets the candidates (each `"accept": null`) for a person to review, then
    `accept_candidates`. `thresholds`, `batch` and `batch_poll`: as in `create_nuggets` (the batch journal is kept
    in the folder of `out`). `model_options`: the other fields of the call's specification
    (judge.nuggets.spec.PoolSpec) by name: the model's, and `page`, a function that renders the candidates' review
    page written beside them (OUT.html; `nuggets pool` gives judge.view.candidates.candidates_page)."""
    arguments = {name: value for name, value in locals().items() if name != "model_options"}
    return await _pool(_spec(PoolSpec, {**arguments, **model_options}))


POOL_FILES = {"candidates": "", "refused": ".refused.jsonl", "summary": ".summary.json", "page": ".html"}


def _pooled_outputs(out: Path, inputs: PoolInputs, files: Sequence[str]) -> Outputs:
    """The files pooling writes (judge.formats.paths), each with an empty text for the caller to replace: the
    candidates file `out` and beside it `.refused.jsonl`, `.summary.json` and the `.html` page. Built once to be
    checked before any model call, and again to be written."""
    sources = {"nuggets": loader.path_list(inputs.nuggets), "reports": loader.path_list(inputs.reports),
               "requests": loader.path_list(inputs.requests), "documents": loader.path_list(inputs.docs)}
    outputs = Outputs(home=out.parent, command="nuggets pool", out=out, inputs=sources)
    for name in files:
        outputs.add(beside(out, POOL_FILES[name]) if POOL_FILES[name] else out, "")
    return outputs


async def _pool(spec: PoolSpec) -> PooledNuggets:
    """Run `spec`: resolve it once and, holding the candidates' folder from the first check to the last rename,
    pool and write (the page too, when asked for)."""
    plan = spec.resolve()
    if spec.outputs.out is None:
        return await _pooled(spec, plan, None)
    out = Path(spec.outputs.out)
    files = tuple(POOL_FILES) if spec.outputs.page is not None else ("candidates", "refused", "summary")
    outputs = _pooled_outputs(out, spec.inputs, files)
    check_apart(list(outputs.texts), outputs.inputs)  # before the lock file is made beside them
    with output_lock(out.parent, "nuggets pool"):
        outputs.check()
        return await _pooled(spec, plan, out)


async def _pooled(spec: PoolSpec, plan: NuggetPlan, out_path: Path | None) -> PooledNuggets:
    from judge.judging.decisions.asker import Decider
    from judge.nuggets.pool import POOL_DECISIONS, check_banks, pool

    sources = spec.inputs
    banks = loader.banks(_given("nuggets", sources.nuggets, NuggetBank), "nuggets")
    reqs = loader.requests(_given("requests", sources.requests, Request), "requests")
    check_banks(banks, reqs, _named(sources.nuggets, "nuggets"))
    runs = loader.report_list(_given("reports", sources.reports, Report), "reports")
    cache = plan.execution.cache
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        with loader.documents(_given("docs", sources.docs, Document), docstore_dir(cache), "docs") as store:
            client, rounds = _client(plan, decision_cache, out_path.parent if out_path is not None else None)
            pooled = await pool(runs, banks, reqs, store, Decider(client, plan.prompts_dir, plan.thresholds),
                                passages=plan.passages)
    finally:
        if decision_cache is not None:
            decision_cache.close()
    batch = rounds.stats.as_dict() if rounds is not None else None
    signature = _signature("pool", plan.model, POOL_DECISIONS, plan.prompts_dir, plan.tag, plan.thresholds)
    result = PooledNuggets(pooled.candidates, pooled.refused, pooled.counts.as_dict(),
                           {"asked": pooled.calls.asked, "answered": pooled.calls.answered,
                            "failed": pooled.calls.failed, **pooled.calls.by_decision}, signature, batch,
                           thresholds_notice=plan.thresholds_notice)
    if out_path is not None:
        outputs = _pooled_outputs(out_path, sources, ("candidates", "refused", "summary"))
        outputs.add(out_path, "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in result.candidates))
        outputs.add(beside(out_path, ".refused.jsonl"),
                    "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.refused))
        outputs.add(beside(out_path, ".summary.json"), json.dumps(
            {"signature": signature, "candidates": len(result.candidates), "counts": result.counts,
             "calls": result.calls, **({"batch": batch} if batch else {})}, indent=2) + "\n")
        outputs.write()
    if rounds is not None:
        rounds.journal.forget()  # the jobs are done with
    if out_path is None or spec.outputs.page is None:
        return result
    page = _pooled_outputs(out_path, sources, ("page",))  # the banks as read before pooling
    path = page.add(beside(out_path, POOL_FILES["page"]), spec.outputs.page(banks, result.candidates, out_path.name))
    page.write()
    return PooledNuggets(**{**result.__dict__, "page": path})


def pool_nuggets(**kwargs: Any) -> PooledNuggets:
    """`pool_nuggets_async`, run to its end (also from inside a running event loop)."""
    return run_sync(pool_nuggets_async(**kwargs))


# help() and the generated reference show the arguments of the async twin this runs
pool_nuggets.__signature__ = inspect.signature(pool_nuggets_async)  # type: ignore[attr-defined]


def accept_candidates(*, nuggets: NuggetInputs, candidates: PathLike, out: PathLike
                      ) -> dict[str, NuggetBank]:
    """The banks extended by the candidates a person marked `"accept": true` (each one needs true or false),
    written to `out` as v3 banks: the added answers `pooled`, the others keep their provenance (`person` when the
    bank recorded none: a NuggetBank object records none, a dict in the v3 format does as its file would).
    `nuggets`: paths, or banks as objects or dicts (taken as they are); `candidates`: the reviewed file. `out`
    must hold no bank (nor other file a bank reader would take) that this call did not write itself, and lie apart
    from the input files (judge.formats.paths)."""
    return _accept(_spec(AcceptSpec, {"nuggets": nuggets, "candidates": candidates, "out": out}))


def _accept(spec: AcceptSpec) -> dict[str, NuggetBank]:
    from judge.nuggets.pool import accept

    given = spec.inputs.nuggets
    sources = loader.path_list(given)
    out_path = Path(spec.outputs.out)
    inputs = {"nuggets": sources, "candidates": loader.path_list(spec.inputs.candidates)}
    check_apart([out_path], inputs, folders=True)
    preflight = Outputs(home=out_path, command="nuggets pool --accept", out=out_path, inputs=inputs)
    preflight.bank_folder(out_path)
    preflight.check()  # before the lock file is made in it
    with output_lock(out_path, "nuggets pool --accept"):
        banks = loader.banks(_given("nuggets", given, NuggetBank), "nuggets")
        reviewed = [(line, row) for line, row in iter_jsonl(Path(spec.inputs.candidates))]
        extended, added = accept(banks, reviewed, str(spec.inputs.candidates))
        provenance: dict[AnswerKey, str] = dict(read_provenance(sources) if sources else provenance_in(
            [item for item in ([given] if isinstance(given, dict) else given) if isinstance(item, dict)]))
        provenance.update(dict.fromkeys(added, "pooled"))
        outputs = Outputs(home=out_path, command="nuggets pool --accept", out=out_path, inputs=inputs)
        write_v3_banks(outputs, out_path, extended, provenance)
        outputs.write()
    return extended
