"""`argue-judge eval`: judge the reports, then write and print what `score` would from the judgments."""

from __future__ import annotations

import inspect
from dataclasses import fields, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from judge.api import EvalOptions, evaluate, plan_batch
from judge.cli import options, ppi
from judge.cli.errors import run_failed, user_errors
from judge.cli.render import (
    console,
    print_argue_leaderboard,
    print_diagnostics,
    print_flags,
    print_leaderboard,
    print_panel,
    print_usage,
)
from judge.errors import ConfigurationError
from judge.labels import DEFAULT_VOTE
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.llm.judges import judge_of
from judge.llm.panel import PanelMember
from judge.llm.router import resolve_model, servers
from judge.run.evaluate import JudgingProgress
from judge.run.inputs import Inputs
from judge.run.outputs import OUTPUT_NAMES, Evaluation
from judge.run.shards import Shard
from judge.run.spec import EvalPlan, Execution
from judge.settings import DEFAULT_INJECTION_DETECTOR, JudgeSettings, ModelSettings, PassagePolicy, RetryPolicy


def eval_command(
    context: typer.Context,
    reports: Annotated[list[Path], typer.Argument(
        help=f"Report files or directories of *.jsonl files: {options.REPORT_FORMATS}.")],
    requests: Annotated[Path, typer.Option("--requests", "-r", help=f"Report requests: {options.REQUEST_FORMATS}.")],
    docs: Annotated[list[Path], typer.Option(
        "--docs", "-d", help=f"Documents, one or more files: {options.DOCUMENT_FORMATS}.")],
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", "-n", help=f"Nugget banks: {options.NUGGET_FORMATS}. Without one, recall is undefined.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", "-m", metavar="MODEL", help="Any litellm model id (openai/gpt-4o-mini, anthropic/..., ollama/..., "
        f"hosted_vllm/...). Default: the embedded offline judge {EMBEDDED_MODEL}. Given more than once: a panel of "
        "those judges (--vote; one --api-base for all, or one per judge in the same order).")] = None,
    api_base: options.ApiBases = None,
    router: options.RouterConfig = None,
    api_key: options.ApiKey = None,
    timeout: options.Timeout = 120.0,
    temperature: options.Temperature = 0.0,
    seed: options.Seed = 0,
    max_tokens: options.MaxTokens = 512,
    logprobs: options.Logprobs = None,
    reasoning_effort: options.ReasoningEffort = None,
    keep_reasoning: options.KeepReasoning = False,
    thresholds: options.ThresholdsOption = None,
    citation_policy: options.Policy = "all",
    truncate: Annotated[bool, typer.Option(
        "--truncate/--no-truncate", help="Judge only the sentences within the request's length limit.")] = True,
    max_doc_chars: options.MaxDocChars = 6000,
    max_doc_bytes: Annotated[int | None, options.setting(
        PassagePolicy, "max_doc_bytes", "--max-doc-bytes", help="Refuse, before any model call, a cited document "
        "larger than this (UTF-8 bytes); the message names its file and line.")] = None,
    concurrency: options.Concurrency = 4,
    threads: options.Threads = None,
    kernels: options.Kernels = "auto",
    max_cost: Annotated[float | None, options.setting(
        Execution, "max_cost", "--max-cost", help="Stop before spending more (USD); 0 allows no paid model call "
        "(cached decisions and free models still run).")] = None,
    price_per_1k: Annotated[float | None, options.setting(
        Execution, "price_per_1k", "--price-per-1k", help="USD per 1,000 tokens (prompt and completion "
        "alike) for a model litellm has no price for; needed for --max-cost with such a model.")] = None,
    max_failed_fraction: Annotated[float, options.setting(
        Execution, "max_failed_fraction", "--max-failed-fraction",
        help="Report the run failed (exit code 5) when more than this share of its sentences failed; outputs are "
        "written all the same.")] = 0.2,
    give_up_after: Annotated[int, options.setting(
        RetryPolicy, "give_up_after", "--give-up-after", help="Stop asking after this many transport failures in a row "
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
        "--ray", metavar="ADDRESS", callback=lambda value: ray_address(value),
        help="Judge on Ray workers: 'local', a Ray runtime on every core of this machine (loopback only); 'auto' or "
        "ray://HOST:PORT, an existing cluster (needs the [ray] extra; docs/scale.md). Outputs are byte-identical to "
        "one process.")] = None,
    workers: Annotated[int | None, options.number(
        "--workers", bounds=options.settings.WORKERS, help="Ray workers (with --ray; default: every core of the "
        "cluster). --concurrency is per worker.")] = None,
    batch: options.Batch = False,
    batch_poll: options.BatchPoll = 30.0,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --batch: print how many requests, rounds and dollars (at the batch price) the run "
        "would take, at most, and submit nothing.")] = False,
    prompts: options.Prompts = None,
    panel_judge: options.PanelJudge = None,
    vote: options.Vote = None,
    on_injection: Annotated[str, options.setting(
        JudgeSettings, "on_injection", "--on-injection",
        help="Text that addresses the judge ('Note to the assessor: ...'), in a sentence or a cited document, is "
        "always flagged and counted. 'quarantine' withholds the flagged pieces from the model (and, "
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
    if dry_run and not batch:  # an option that cannot take effect is refused, not ignored
        raise typer.BadParameter("only batch jobs are planned ahead: add --batch, or drop --dry-run",
                                 param_hint="--dry-run")
    given = context.params
    models = model or [EMBEDDED_MODEL]
    with user_errors(debug):
        one_judge = len(models) == 1 or len(api_base or []) != len(models)  # one server each: the judges' own
        settings = replace(model_settings(models[0], (api_base or []) if one_judge else api_base[:1], router, api_key,
                                          timeout, temperature, seed, max_tokens),
                           logprobs=logprobs)  # what a thresholds file is checked on
        panel = judges(models, api_base or [], panel_judge, vote, replace(
            settings, threads=threads, kernels=kernels, reasoning_effort=reasoning_effort,
            keep_reasoning=keep_reasoning), prompts)
        # Every other option is a field of the run's spec (judge.run.spec.EvalSpec) by the name OPTION_FIELDS gives.
        arguments = {OPTION_FIELDS.get(name, name): None if value in ([], ()) else value  # a list option not given
                     for name, value in given.items() if name not in CLI_ONLY}
        arguments.update(model=settings.model, api_base=settings.api_base, api_bases=settings.api_bases,
                         router_config=settings.router_config, cache=None if no_cache else cache)
        if panel:  # the judges name their own models and servers (judge.llm.panel.PanelMember)
            for field in fields(ModelSettings):
                del arguments[field.name]
            arguments["panel"] = panel
        if thresholds is not None:  # a file (or 'none') read here, at the edge; the default is the spec's to decide
            arguments["thresholds"] = options.judge_thresholds(thresholds, settings, prompts)
        if dry_run:  # the plan reads the inputs and the settings that bound requests, rounds and price
            planned = set(inspect.signature(plan_batch).parameters) | set(EvalOptions.__optional_keys__)
            _render_plan(plan_batch(**{k: v for k, v in arguments.items() if k in planned}), settings)
            return
    part = Shard.parse(shard) if shard else None
    with user_errors(debug), ProgressBar() as bar:
        who = (f"a panel of {len(panel)} judges ({', '.join(m.name for m in panel)}; vote {vote or DEFAULT_VOTE})"
               if panel else settings.model)
        evaluation = evaluate(**arguments, progress=bar.callbacks(settings, part, ray, who))
    _render(evaluation, settings, out)


# eval's options whose spec field has another name, and those that are the command line's own.
OPTION_FIELDS = {"citation_policy": "policy", "max_doc_chars": "max_chars", "prompts": "prompts_dir",
                 "with_baselines": "baselines", "router": "router_config"}
CLI_ONLY = {"debug", "dry_run", "no_cache", "thresholds", "api_base", "router", "panel_judge"}


def judges(models: list[str], api_bases: list[str], panel_judge: list[str] | None, vote: str | None,
           settings: ModelSettings, prompts: Path | None) -> tuple[PanelMember, ...]:
    """The panel eval's options ask for: `--model` given more than once (each judge with the other model options;
    one --api-base for all, or one per judge in the same order), or `--panel-judge` once per judge. Empty for one
    judge; a --vote without a panel is the spec's to refuse."""
    if panel_judge and len(models) > 1:
        raise typer.BadParameter("give the judges of a panel either by --model repeated or by --panel-judge, not both",
                                 param_hint="--panel-judge")
    if panel_judge:
        return options.panel_members(panel_judge, vote, settings, prompts)
    if len(models) == 1:
        return ()
    if len(api_bases) not in (0, 1, len(models)):
        raise typer.BadParameter(f"{len(models)} judges (--model) and {len(api_bases)} servers: give one --api-base "
                                 "for all, or one per judge in the order of the models", param_hint="--api-base")
    servers = api_bases if len(api_bases) == len(models) else [settings.api_base] * len(models)
    return tuple(PanelMember(replace(settings, model=name, api_base=server, api_bases=()), prompts)
                 for name, server in zip(models, servers, strict=True))


class ProgressBar:
    """eval's progress on the terminal: what is judged, then a bar of sentences and a count of decisions."""

    def __init__(self) -> None:
        self.bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TextColumn("sentences"), TimeElapsedColumn(), console=console,
                            transient=False)
        self.counts = {"decisions": 0, "cached": 0}
        self.batch = ""  # with --batch: the round and the jobs' states
        self.task: Any = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.task is not None:
            self.bar.stop()

    def callbacks(self, settings: ModelSettings, part: Shard | None, ray: str | None, who: str) -> JudgingProgress:
        def planned(plan: EvalPlan) -> None:
            if plan.thresholds_notice:  # which default thresholds the judge got (a given file said so already)
                console.print(plan.thresholds_notice, highlight=False, soft_wrap=True)

        def loaded(inputs: Inputs) -> None:
            runs = len({entry.run_id for entry in inputs.reports.entries})
            console.print(f"Judging {len(inputs.reports)} reports of {runs} runs "
                          f"with {who}" + (f" (shard {part})" if part else "")
                          + (f" on {len(servers(settings))} servers" if settings.routed else "")
                          + (f" on Ray ({ray})" if ray else ""), highlight=False)
            notice = judge_of(settings).notice()  # the embedded judge's kernels and CPU
            if notice:
                console.print(notice, highlight=False, soft_wrap=True)
            self.bar.start()
            self.task = self.bar.add_task("judging", total=None)

        def decision_done(cached: bool) -> None:
            self.counts["decisions"] += 1
            self.counts["cached"] += cached
            self._describe()

        def batch_state(stats: Any) -> None:
            states = ", ".join(f"{n} {state}" for state, n in sorted(stats.states.items()))
            self.batch = f"round {stats.rounds}, jobs: {states}; "
            self._describe()

        return JudgingProgress(planned=planned, loaded=loaded,
                               start=lambda total: self.bar.update(self.task, total=total),
                               sentence_done=lambda: self.bar.advance(self.task), decision_done=decision_done,
                               batch_state=batch_state)

    def _describe(self) -> None:
        self.bar.update(self.task, description=f"{self.batch}{self.counts['decisions']} decisions "
                                               f"({self.counts['cached']} cached)")


def _render(evaluation: Evaluation, settings: ModelSettings, out: Path) -> None:
    """What eval prints once the files are written."""
    rows = evaluation.scores.aggregate_rows()
    paths = [out / name for name in OUTPUT_NAMES]
    print_argue_leaderboard(rows)
    print_flags(rows, str(out / "judgments.jsonl"))
    if evaluation.baseline_results:
        print_leaderboard(rows + [row for r in evaluation.baseline_results for row in r.rows],
                          ["F1", *(r.headline for r in evaluation.baseline_results)],
                          "The judge beside the baselines (run level)", sort_by="F1")
    if evaluation.estimates is not None:
        ppi.show(evaluation.estimates.corrected, evaluation.estimates.signature, evaluation.estimates.paths)
    print_panel(evaluation.run.get("panel"))
    print_usage(evaluation.usage, evaluation.seconds)
    if "batch" in evaluation.run:
        batch = evaluation.run["batch"]
        console.print(f"batch: {batch['rounds']} rounds, {batch['jobs']} jobs submitted"
                      f"{f' ({n} of an earlier run polled)' if (n := batch['resumed_jobs']) else ''}, "
                      f"{batch['requests']} requests, {batch['failed_lines']} re-asked after a failed line; "
                      f"cost at the batch price", highlight=False)
    print_diagnostics(evaluation.diagnostics, out / "run-summary.json")
    console.print(f"signature: {evaluation.signature.short()}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(p) for p in paths)}", highlight=False, soft_wrap=True)
    if evaluation.view_index is not None:
        console.print(f"view: {evaluation.view_index}", highlight=False, soft_wrap=True)
    if evaluation.failure:
        run_failed(evaluation.failure)


def _render_plan(plan: Any, settings: ModelSettings) -> None:
    """What eval --batch --dry-run prints (judge.run.batch_plan.BatchPlan): bounds, nothing submitted."""
    cost = "unknown (litellm has no price for this model)" if plan.cost is None else f"${plan.cost:.4f}"
    console.print(f"batch plan for {settings.model}: {plan.reports} reports, {plan.sentences} sentences; at most "
                  f"{plan.requests} requests in at most {plan.rounds} rounds, ~{plan.prompt_tokens} prompt tokens, "
                  f"at most {cost} at the batch price (decisions already in the cache cost nothing); nothing was "
                  "submitted", highlight=False, soft_wrap=True)


def ray_address(value: str | None) -> str | None:
    """--ray's value, refused when it is the next option (`--ray --docs D`: click gives --ray the word '--docs',
    and the run would then say --docs is missing)."""
    if value is not None and value.startswith("-"):
        raise typer.BadParameter(f"needs an ADDRESS (local, auto, ray://HOST:PORT or HOST:PORT) and got the option "
                                 f"{value!r}: write e.g. --ray local", param_hint="--ray")
    return value


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
