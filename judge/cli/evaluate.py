"""`argue-judge eval`: judge the reports, then write and print what `score` would from the judgments."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from judge.api import docstore_dir, eval_config
from judge.cli import options, ppi
from judge.cli.errors import run_failed, user_errors
from judge.cli.render import (
    console,
    print_argue_leaderboard,
    print_diagnostics,
    print_flags,
    print_leaderboard,
    print_usage,
)
from judge.diagnostics import Diagnostics
from judge.errors import ConfigurationError
from judge.formats.lock import output_lock
from judge.labels import CITATION_POLICIES
from judge.llm.client import price_known
from judge.llm.embedded import EMBEDDED_MODEL, EMBEDDED_PROVIDER
from judge.llm.kernels import kernels_line
from judge.llm.router import resolve_model, servers
from judge.run.evaluate import Progress as Hooks
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.outputs import write_outputs
from judge.run.prediction_powered import check_human_files, estimate_with_humans, ppi_json
from judge.run.shards import Shard
from judge.settings import (
    DEFAULT_INJECTION_DETECTOR,
    INJECTION_POLICIES,
    JudgeSettings,
    ModelSettings,
    PassagePolicy,
    RetryPolicy,
)


def eval_command(
    reports: Annotated[list[Path], typer.Argument(help="Report files or directories of *.jsonl files.")],
    requests: Annotated[Path, typer.Option("--requests", "-r", help="Report requests (JSONL).")],
    docs: Annotated[list[Path], typer.Option("--docs", "-d", help="Documents (JSONL), one or more files.")],
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", "-n", help=f"Nugget banks: {options.NUGGET_FORMATS}. Without one, recall is undefined.")] = None,
    model: options.Model = EMBEDDED_MODEL,
    api_base: options.ApiBases = None,
    router: options.RouterConfig = None,
    api_key: options.ApiKey = None,
    timeout: options.Timeout = 120.0,
    temperature: options.Temperature = 0.0,
    seed: options.Seed = 0,
    max_tokens: options.MaxTokens = 512,
    logprobs: options.Logprobs = None,
    thresholds: options.ThresholdsOption = None,
    citation_policy: options.Policy = "all",
    truncate: Annotated[bool, typer.Option(
        "--truncate/--no-truncate", help="Judge only the sentences within the request's length limit.")] = True,
    max_doc_chars: options.MaxDocChars = 6000,
    max_doc_bytes: Annotated[int | None, options.number(
        "--max-doc-bytes", bounds=options.Bounds(1, 2**40), help="Refuse, before any model call, a cited document "
        "larger than this (UTF-8 bytes); the message names its file and line.")] = None,
    concurrency: options.Concurrency = 4,
    threads: options.Threads = None,
    kernels: options.Kernels = "auto",
    max_cost: Annotated[float | None, options.number(
        "--max-cost", bounds=options.USD, help="Stop before spending more (USD); 0 allows no paid model call "
        "(cached decisions and free models still run).")] = None,
    price_per_1k: Annotated[float | None, options.number(
        "--price-per-1k", bounds=options.USD, help="USD per 1,000 tokens (prompt and completion "
        "alike) for a model litellm has no price for; needed for --max-cost with such a model.")] = None,
    max_failed_fraction: Annotated[float, options.number(
        "--max-failed-fraction", bounds=options.FRACTION, help="Report the run failed (exit code 5) when more "
        "than this share of its sentences failed; outputs are written all the same.")] = 0.2,
    give_up_after: Annotated[int, options.number(
        "--give-up-after", bounds=options.COUNT, help="Stop asking after this many transport failures in a row "
        "(timeouts, refused or dropped connections, 5xx; rate limits do not count) with no answer from the server "
        "between them: the decisions not yet asked are recorded failed, not cached, and the run exits 5 (--resume "
        "asks them later). Not in the signature.")
    ] = RetryPolicy.give_up_after,
    cache: options.Cache = options.DEFAULT_CACHE_TARGET,
    no_cache: options.NoCache = False,
    shard: Annotated[str | None, typer.Option(
        "--shard", help="Judge only shard I of N (e.g. 2/3), chosen by a hash of run and request; combine the "
        "shards' --out directories with `argue-judge merge`.")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Keep the reports already judged whose inputs did not change: those of a killed run (its "
        "log in --out/.argue-run) if there is one, else those of the finished --out/judgments.jsonl; without it "
        "they are judged again, from the cache.")] = False,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS",
        help="Judge on Ray workers: 'local', a Ray runtime on every core of this machine (loopback only); 'auto' or "
        "ray://HOST:PORT, an existing cluster (needs the [ray] extra; docs/scale.md). Outputs are byte-identical to "
        "one process.")] = None,
    workers: Annotated[int | None, options.number(
        "--workers", bounds=options.Bounds(1, 100_000), help="Ray workers (with --ray; default: every core of the "
        "cluster). --concurrency is per worker.")] = None,
    prompts: options.Prompts = None,
    on_injection: Annotated[str, typer.Option(
        "--on-injection", help="Text that addresses the judge ('Note to the assessor: ...'), in a sentence or a cited "
        "document, is always flagged and counted. 'quarantine' withholds the flagged pieces from the model (and, "
        "with the default --injection-detector, pieces in a script foreign to their text, unflagged), which judges "
        "what remains; 'flag' shows the model the text as written; 'penalise' judges a flagged sentence "
        "unsupported (#1 cited, #5 uncited) without asking the model.")
    ] = "quarantine",
    injection_detector: options.InjectionDetectorOption = DEFAULT_INJECTION_DETECTOR,
    view: Annotated[bool, typer.Option(
        "--view", help="Also write the HTML view of the judgments to OUT/view (index.html, one page per report).")
    ] = False,
    with_baselines: Annotated[bool, typer.Option(
        "--with-baselines", help="Also score the reports with EXAM (and ROUGE, pa-BLEU, pa-METEOR with --gold).")
    ] = False,
    gold: Annotated[list[Path] | None, typer.Option(
        "--gold", help="Gold reports for the reference-based baselines.")] = None,
    human: options.Human = None,
    sample: options.Sample = "reports",
    confidence: options.Confidence = 0.95,
    out: options.Out = Path("argue-out"),
    debug: options.Debug = False,
) -> None:
    """Judge reports sentence by sentence (ARGUE) and write judgments, scores and a leaderboard. With --human,
    also the prediction-powered estimates of each run's scores from a human sample (docs/ppi.md)."""
    ppi.check_design(sample)
    if citation_policy not in CITATION_POLICIES:
        raise typer.BadParameter(f"choose one of {', '.join(CITATION_POLICIES)}", param_hint="--citation-policy")
    if on_injection not in INJECTION_POLICIES:
        raise typer.BadParameter(f"choose one of {', '.join(INJECTION_POLICIES)}", param_hint="--on-injection")
    with user_errors(debug):
        part = Shard.parse(shard) if shard else None
        ray = check_ray_address(ray, workers)
        settings = model_settings(model, api_base or [], router, api_key, timeout, temperature, seed, max_tokens)
    if max_cost is not None and price_per_1k is None and not price_known(settings.model):
        raise typer.BadParameter(f"litellm has no price for {settings.model!r}, so the budget cannot be enforced; "
                                 "add --price-per-1k USD (per 1,000 tokens)", param_hint="--max-cost")
    passages = PassagePolicy(max_chars=max_doc_chars, max_doc_bytes=max_doc_bytes)
    settings = replace(settings, logprobs=logprobs, threads=threads, kernels=kernels)
    with user_errors(debug):  # a bad thresholds file stops the run before any input is read
        rules = options.judge_thresholds(thresholds, settings, prompts)
    # Inputs are read and checked before --out is touched. Then one run writes --out at a time, to its last rename
    # (judge.formats.lock); until then the finished files of an earlier run stay as they are (the new ones are
    # written in OUT/.argue-run and swapped in by write_outputs).
    with user_errors(debug), Inputs.load(reports, requests, nuggets, docs, docstore_dir(cache),
                                         max_doc_bytes=max_doc_bytes, shard=part) as inputs, \
            output_lock(out, "eval"):
        if human:  # refuse a human file that does not fit before any model call
            check_human_files(human, {entry.key for entry in inputs.reports.entries}, sample)  # type: ignore[arg-type]
        config = eval_config(
            settings,
            JudgeSettings(citation_policy, truncate, passages, prompts,  # type: ignore[arg-type]
                          on_injection=on_injection, thresholds=rules,  # type: ignore[arg-type]
                          injection_detector=injection_detector),  # type: ignore[arg-type]
            cache=None if no_cache else cache, concurrency=concurrency,
            retry=RetryPolicy(give_up_after=give_up_after), max_cost=max_cost, price_per_1k=price_per_1k,
            max_failed_fraction=max_failed_fraction, shard=part, resume=resume, ray=ray, workers=workers)
        runs = len({entry.run_id for entry in inputs.reports.entries})
        console.print(f"Judging {len(inputs.reports)} reports of {runs} runs "
                      f"with {settings.model}" + (f" (shard {part})" if part else "")
                      + (f" on {len(servers(settings))} servers" if settings.routed else "")
                      + (f" on Ray ({ray})" if ray else ""), highlight=False)
        if settings.model.startswith(f"{EMBEDDED_PROVIDER}/"):
            console.print(kernels_line(settings.kernels), highlight=False, soft_wrap=True)
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("sentences"), TimeElapsedColumn(), console=console, transient=False) as bar:
            task = bar.add_task("judging", total=None)
            counts = {"decisions": 0, "cached": 0}

            def decision_done(cached: bool) -> None:
                counts["decisions"] += 1
                counts["cached"] += cached
                bar.update(task, description=f"{counts['decisions']} decisions ({counts['cached']} cached)")

            evaluation = evaluate(inputs, config, Hooks(
                start=lambda total: bar.update(task, total=total),
                sentence_done=lambda: bar.advance(task), decision_done=decision_done), out=out)
        baseline_rows, headlines = ([], [])
        if with_baselines:  # before the summary is written, so their diagnostics reach run-summary.json
            baseline_rows, headlines = _baselines(inputs, gold, out, evaluation.diagnostics)
        paths = write_outputs(evaluation, out)
        corrected = estimate_with_humans(evaluation.scores, evaluation.score_signature, human,
                                         evaluation.judgments, sample, confidence,  # type: ignore[arg-type]
                                         citation_policy, inputs.banks) if human else None  # type: ignore[arg-type]
        ppi_paths = ppi.write(*corrected, out) if corrected is not None else []
        if view:  # while the document store is open: the pages show the cited documents
            from judge.view import write_view  # pulls in jinja2 and scipy only when asked for

            index = write_view(evaluation.judgments, out / "view", requests=inputs.requests, banks=inputs.banks,
                               documents=inputs.documents,
                               estimates=ppi_json(*corrected) if corrected else None).index
    print_argue_leaderboard(evaluation.scores.aggregate_rows())
    print_flags(evaluation.scores.aggregate_rows())
    if with_baselines:
        print_leaderboard(evaluation.scores.aggregate_rows() + baseline_rows, ["F1", *headlines],
                          "The judge beside the baselines (run level)", sort_by="F1")
    if corrected is not None:
        ppi.show(*corrected, ppi_paths)
    print_usage(evaluation.usage, evaluation.seconds)
    print_diagnostics(evaluation.diagnostics)
    console.print(f"signature: {evaluation.score_signature.short()}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(p) for p in paths.values())}", highlight=False, soft_wrap=True)
    if view:
        console.print(f"view: {index}", highlight=False, soft_wrap=True)
    if evaluation.failure:
        run_failed(evaluation.failure)


def check_ray_address(address: str | None, workers: int | None) -> str | None:
    """`--ray`'s value: local, auto, ray://HOST:PORT or HOST:PORT (a mistyped word is refused, not tried)."""
    if address is None:
        if workers is not None:
            raise ConfigurationError("--workers needs --ray (one process has no workers)")
        return None
    if address in ("local", "auto") or "://" in address or address.rpartition(":")[2].isdigit():
        return address
    raise ConfigurationError(f"--ray {address!r} is not local (a Ray runtime on this machine), auto, "
                             "ray://HOST:PORT or HOST:PORT")


def model_settings(model: str, api_bases: list[str], router: Path | None, api_key: str | None, timeout: float,
                   temperature: float, seed: int, max_tokens: int) -> ModelSettings:
    """One server (`--api-base` once), several (`--api-base` repeated) or a litellm Router config (`--router`)."""
    if router is not None and api_bases:
        raise ConfigurationError("give either --router or --api-base: the router config names its servers")
    if router is not None:
        # The default model is the embedded judge; with a router config, the file's model unless --model says.
        model = resolve_model(router, None if model == EMBEDDED_MODEL else model)
    return ModelSettings(model, api_bases[0] if len(api_bases) == 1 else None, api_key, temperature, seed,
                         max_tokens, timeout=timeout, api_bases=tuple(api_bases) if len(api_bases) > 1 else (),
                         router_config=router)


def _baselines(inputs: Inputs, gold: list[Path] | None, out: Path, diagnostics: Diagnostics
               ) -> tuple[list, list[str]]:
    from judge.baselines import BaselineWarning
    from judge.baselines.suite import run_baselines
    from judge.formats import read_reports
    from judge.formats.scores import write_scores

    with diagnostics.capture_warnings(BaselineWarning, "baselines"):
        results, notes = run_baselines(inputs.reports, inputs.banks, read_reports(list(gold)) if gold else None)
    diagnostics.extend(notes, "baselines")  # a baseline that did not run is missing from the table
    rows = []
    for result in results:
        write_scores(out / f"{result.name}.scores.tsv", result.rows, str(result.signature))
        rows.extend(result.rows)
    return rows, [r.headline for r in results]
