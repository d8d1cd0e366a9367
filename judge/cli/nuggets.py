"""`argue-judge nuggets create` and `argue-judge nuggets pool`: nugget banks from documents, and more answers for
a bank's questions from runs (docs/nuggets.md). Each command parses its options, each of which is one field of the
call's specification (judge.nuggets.spec; OPTION_FIELDS names those spelt otherwise, held 1:1 by
tests/test_nugget_spec.py), makes one API call (judge.nuggets.api) and prints what it returns; nothing changes a
bank people wrote without `pool --accept`."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any

import typer

from judge.api import accept_candidates, create_nuggets, pool_nuggets
from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.nuggets.settings import NuggetSettings
from judge.nuggets.spec import BankOutputs, NuggetExecution
from judge.settings import ModelSettings

app = typer.Typer(help="Create nugget banks from documents; pool new answers from runs.", no_args_is_help=True)

Requests = Annotated[Path, typer.Option("--requests", "-r", help="Requests file (JSONL).")]
Docs = Annotated[list[Path], typer.Option("--docs", "-d", help="Documents (JSONL files or directories).")]
Concurrency = Annotated[int, options.setting(NuggetExecution, "concurrency", "--concurrency", "-j",
                                             help="Decisions in flight at once.")]
# What --accept reads; every other option of `pool` is for judging, which --accept does not do, so each of them
# given with --accept is refused (read from the command's own options, so a new judging option is covered).
ACCEPT_OPTIONS = ("nuggets", "out", "accept", "debug")
# The options whose spec field has another name, and those that are the command line's own (--thresholds is read
# here, at the edge: a file or 'none'; left out, its default is the spec's to decide).
OPTION_FIELDS = {"bank_format": "format", "prompts": "prompts_dir", "accept": "candidates"}
CLI_ONLY = {"debug", "no_cache", "thresholds"}


def _arguments(ctx: typer.Context) -> dict[str, Any]:
    """The command's options as the fields of its spec (a list option not given is None)."""
    given = ctx.params
    arguments = {OPTION_FIELDS.get(name, name): None if value in ([], ()) else value
                 for name, value in given.items() if name not in CLI_ONLY}
    arguments["cache"] = None if given["no_cache"] else given["cache"]
    if given["thresholds"] is not None:  # its notice printed as eval prints it
        model = ModelSettings(**{f.name: arguments[f.name] for f in fields(ModelSettings) if f.name in arguments})
        arguments["thresholds"] = options.judge_thresholds(given["thresholds"], model, given["prompts"])
    return arguments


@app.command("create")
def create_command(
    ctx: typer.Context,
    requests: Requests,
    docs: Docs,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the banks; the review file and summary go "
                                      "beside it (OUT.review.jsonl, OUT.summary.json).", file_okay=False,
                                      callback=options.under_folders)],
    doc_lists: Annotated[Path | None, typer.Option(
        "--doc-lists", help="Which documents belong to which request: a TREC run, qrels, or JSONL "
        "{request_id, doc_ids}. Default: every document for every request.")] = None,
    gold_report: Annotated[list[Path] | None, typer.Option(
        "--gold-report", help="Reports whose sentences are drafted from too (they attest nothing).")] = None,
    max_nuggets: Annotated[int, options.setting(NuggetSettings, "max_nuggets", "--max-nuggets", "-k",
                                                help="Nuggets kept per request (K).")] = 10,
    max_docs: Annotated[int | None, options.setting(NuggetSettings, "max_docs", "--max-docs", help=(
        "Draft from the top M documents of each request by the judge's relevance call (default: all)."))] = None,
    bank_format: Annotated[str, options.setting(BankOutputs, "format", "--format", help=(
        "Bank layout: v3 (Auto-ARGUE, AutoJudge; keeps bindings and provenance) or nuggetizer (castorini)."))] = "v3",
    model: options.Model = options.EMBEDDED_MODEL,
    api_base: options.ApiBase = None,
    api_key: options.ApiKey = None,
    temperature: options.Temperature = 0.0,
    seed: options.Seed = 0,
    timeout: options.Timeout = 120.0,
    threads: options.Threads = None,
    concurrency: Concurrency = 4,
    prompts: options.Prompts = None,
    logprobs: options.Logprobs = None,
    thresholds: options.ThresholdsOption = None,
    cache: options.Cache = options.DEFAULT_CACHE_TARGET,
    no_cache: options.NoCache = False,
    batch: options.Batch = False,
    batch_poll: options.BatchPoll = 30.0,
    debug: options.Debug = False,
) -> None:
    """Draft nugget questions with short answers from each request's documents; every answer is bound only to
    documents eval's supports_citation decision says attest it. Writes banks and a review file to read first."""
    with user_errors(debug), _notice_alone():
        created = create_nuggets(**_arguments(ctx))
    _print_notice(created.thresholds_notice)
    for request_id, bank in created.banks.items():
        answers = sum(len(n.answers) for n in bank.nuggets)
        calls = created.calls[request_id]
        console.print(f"{request_id}: {len(bank.nuggets)} nuggets, {answers} attested answers "
                      f"({calls['asked']} decisions, {calls['answered']} asked of the model, {calls['failed']} failed)",
                      highlight=False)
    _print_batch(created.batch)
    console.print(f"signature: {created.signature}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(p) for p in created.written)}; read the review file before using the banks",
                  highlight=False, soft_wrap=True)


@app.command("pool")
def pool_command(
    ctx: typer.Context,
    nuggets: Annotated[list[Path], typer.Option("--nuggets", "-n", help=f"Nugget banks: {options.NUGGET_FORMATS}.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Candidates file (JSONL) to review; with --accept, the "
                                      "directory for the extended banks.", callback=options.under_folders)],
    reports: Annotated[list[Path] | None, typer.Option("--reports", help="Runs' reports (JSONL files or "
                                                       "directories).")] = None,
    requests: Annotated[Path | None, typer.Option("--requests", "-r", help="Requests file (JSONL).")] = None,
    docs: Annotated[list[Path] | None, typer.Option("--docs", "-d", help="Documents (JSONL).")] = None,
    accept: Annotated[Path | None, typer.Option(
        "--accept", help="Reviewed candidates (each with \"accept\": true or false): write the banks extended by "
        "the accepted ones to --out.")] = None,
    model: options.Model = options.EMBEDDED_MODEL,
    api_base: options.ApiBase = None,
    api_key: options.ApiKey = None,
    temperature: options.Temperature = 0.0,
    seed: options.Seed = 0,
    timeout: options.Timeout = 120.0,
    threads: options.Threads = None,
    concurrency: Concurrency = 4,
    prompts: options.Prompts = None,
    logprobs: options.Logprobs = None,
    thresholds: options.ThresholdsOption = None,
    cache: options.Cache = options.DEFAULT_CACHE_TARGET,
    no_cache: options.NoCache = False,
    batch: options.Batch = False,
    batch_poll: options.BatchPoll = 30.0,
    debug: options.Debug = False,
) -> None:
    """Find answers to the banks' questions that runs' reports give and the banks lack, each attested by a
    document the sentence cites; write them as candidates for review. --accept then adds the accepted ones."""
    if accept is not None:
        ignored = _given(ctx, exclude=ACCEPT_OPTIONS)
        if ignored:
            raise typer.BadParameter(f"{', '.join(ignored)} would be ignored: --accept judges nothing, it adds the "
                                     "accepted candidates to the --nuggets banks; drop them", param_hint="--accept")
    with user_errors(debug):
        if accept is not None:
            extended = accept_candidates(nuggets=nuggets, candidates=accept, out=out)
            console.print(f"wrote {len(extended)} banks to {out}", highlight=False)
            return
        missing = [name for name, value in (("--reports", reports), ("--requests", requests), ("--docs", docs))
                   if not value]
        if missing:
            raise typer.BadParameter(f"pooling needs {', '.join(missing)} (or --accept FILE to apply a review)")
        from judge.view.candidates import candidates_page

        arguments = _arguments(ctx)
        del arguments["candidates"]  # None: this is pooling
        with _notice_alone():
            pooled = pool_nuggets(**arguments, page=candidates_page)  # the page beside the candidates
    _print_notice(pooled.thresholds_notice)
    counts = pooled.counts
    console.print(f"{counts['sentences']} cited sentences, {counts['answers']} answers given, {counts['restated']} "
                  f"restate a bank answer, {counts['unattested']} refused (no cited document attests them), "
                  f"{len(pooled.candidates)} candidates; {counts['failed']} decisions failed", highlight=False)
    _print_batch(pooled.batch)
    console.print(f"signature: {pooled.signature}", highlight=False, soft_wrap=True)
    console.print(f"wrote {out} and {pooled.page}: set \"accept\" to true or false on each line, then pool "
                  f"--accept {out}", highlight=False, soft_wrap=True)


@contextmanager
def _notice_alone() -> Iterator[None]:
    """Shipped thresholds refused for an edited prompt are said by the call's notice (`_print_notice`), once, not
    also as a warning."""
    from judge.judging.thresholds import ThresholdsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ThresholdsWarning)
        yield


def _print_notice(notice: str) -> None:
    if notice:  # which default thresholds the bindings got (a given file said so already)
        console.print(notice, highlight=False, soft_wrap=True)


def _print_batch(batch: dict[str, object] | None) -> None:
    if batch is not None:
        from judge.llm.batch import batch_line

        console.print(batch_line(batch), highlight=False, soft_wrap=True)


def _given(ctx: typer.Context, exclude: tuple[str, ...]) -> list[str]:
    """The options, other than those named in `exclude`, given on the command line (not left at their default
    nor read from the environment, as --api-key may be)."""
    given = []
    for param in ctx.command.params:
        if param.name is not None and param.name not in exclude:
            source = ctx.get_parameter_source(param.name)
            if source is not None and source.name == "COMMANDLINE":
                given.append(param.opts[0])
    return given
