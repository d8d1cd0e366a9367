"""Options shared by several commands, defined once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, get_args

import typer

from judge import labels, settings
from judge.cli.render import console
from judge.formats import registry
from judge.judging.thresholds import check_confidence_for, choose_thresholds
from judge.labels import CITATION_POLICIES
from judge.llm.cache.store import DEFAULT_CACHE_DIR
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.llm.panel import PanelMember
from judge.settings import JudgeSettings, ModelSettings, Thresholds


class Bounds(settings.Bounds):
    """The declared range of a numeric option, checked when the command line is parsed (it is the option's typer
    callback): `nan`, `inf` and a value outside the range are usage errors (one line, exit 2) before anything
    runs, never a silent setting. The range is printed in the option's --help and in docs/errors.md. The ranges of
    settings are declared as the types of the settings objects' fields (judge.settings), which the API checks too.

    Every int and float option of every command gets one (tests/test_numeric_options.py walks the CLI's own
    model and feeds each numeric option 0, -1, nan, inf and 10**18)."""

    def __call__(self, value: float | None) -> float | None:
        if value is not None and not self.contains(value):
            raise typer.BadParameter(f"{value} is not {self}")
        return value

    @classmethod
    def of(cls, bounds: settings.Bounds) -> Bounds:
        return bounds if isinstance(bounds, cls) else cls(bounds.low, bounds.high, bounds.low_open, bounds.high_open)


def number(*declarations: str, bounds: settings.Bounds, help: str, **extra: Any) -> Any:
    """A typer.Option for an int or float with its declared range: the one mechanism for numeric options."""
    return typer.Option(*declarations, callback=Bounds.of(bounds), help=f"{help} Range: {bounds.interval}.", **extra)


def setting(settings_class: type, name: str, *declarations: str, help: str, **extra: Any) -> Any:
    """A typer.Option for a setting whose range or choices the settings object declares (the type of its field,
    judge.settings): the CLI checks what the API checks."""
    try:
        return number(*declarations, bounds=settings.bounds_of(settings_class, name), help=help, **extra)
    except TypeError:  # not a number: a choice
        pass
    choices = settings.choices_of(settings_class, name)
    return typer.Option(*declarations, callback=lambda value: one_of(value, choices), help=help, **extra)


# Shared ranges (declared in judge.settings, beside the settings they bound).
FRACTION = settings.FRACTION
SEED = settings.SEED
COUNT = settings.COUNT
USD = settings.USD
CHARACTERS = settings.CHARACTERS
SECONDS = settings.SECONDS


def one_of(value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise typer.BadParameter(f"choose one of {', '.join(choices)}")
    return value


Model = Annotated[str, typer.Option(
    "--model", "-m", help="Any litellm model id (openai/gpt-4o-mini, anthropic/..., ollama/..., hosted_vllm/...). "
    f"Default: the embedded offline judge {EMBEDDED_MODEL}.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible or other server.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", envvar="ARGUE_JUDGE_API_KEY", show_envvar=True,
                                            help="Key for the provider (litellm also reads e.g. OPENAI_API_KEY).")]
ThresholdsOption = Annotated[str | None, typer.Option(
    "--thresholds", help="Decision thresholds from calibrate --fit-threshold (a FILE), or 'none': a verdict held "
    "with less confidence flips (both verdicts are kept in the judgments, or the nugget review file; the signature "
    "names the rules). Default: the embedded judge with the shipped prompts uses the thresholds fitted for it on "
    "dev data (judge/data/embedded-thresholds.json); other judges use none. eval, calibrate and the nugget commands "
    "decide this alike.")]
Temperature = Annotated[float, setting(ModelSettings, "temperature", "--temperature",
                                        help="Sampling temperature (recorded in the signature).")]
Seed = Annotated[int, setting(ModelSettings, "seed", "--seed",
                              help="Sampling seed passed to the model (recorded in the signature).")]
MaxTokens = Annotated[int, setting(ModelSettings, "max_tokens", "--max-tokens", help="Maximum tokens per judgment.")]
Concurrency = Annotated[int, number("--concurrency", "-j", bounds=settings.CONCURRENCY,  # Execution.concurrency
                                    help="Decisions in flight at once.")]
Threads = Annotated[int | None, setting(
    ModelSettings, "threads", "--threads", help="CPU threads of the embedded judge. Default: the cores other processes "
    "leave free, re-decided before every completion (one more thread than free cores can make it several times "
    "slower).")]
MaxDocChars = Annotated[int, setting(settings.PassagePolicy, "max_chars", "--max-doc-chars",
                                     help="Longer documents are cut into the passages closest to the sentence.")]
Kernels = Annotated[str, setting(
    ModelSettings, "kernels", "--kernels", help="llama.cpp CPU kernels of the embedded judge: "
    "'fast' (weights repacked for the CPU's widest kernels, AMX where compiled in), 'safe' (no AMX, no repacking), "
    "'auto' (safe on CPUs with AMX, whose kernels crash llama-cpp-python 0.3.36, fast elsewhere). Recorded in "
    "run-summary.json; hosted models ignore it.")]
# Detector stacks offered once and since removed, each with what to use instead.
REMOVED_INJECTION_DETECTORS = {
    "rules": "the rules alone are gone (they measured what the learned detector adds): use rules+learned, the "
             "rules and the learned detector without the script check, or the default rules+learned+script"}


def injection_detector(value: str) -> str:
    if value in REMOVED_INJECTION_DETECTORS:
        raise typer.BadParameter(REMOVED_INJECTION_DETECTORS[value])
    return one_of(value, settings.choices_of(JudgeSettings, "injection_detector"))


InjectionDetectorOption = Annotated[str, typer.Option(
    "--injection-detector", callback=injection_detector, help="What flags and withholds text that addresses the "
    "judge: 'rules+learned+script' (the rules, then the learned detector of judge/data/injection-detector.json, "
    "flag it; the quarantine also withholds, unflagged, pieces in a non-Latin script foreign to their text) or "
    "'rules+learned' (no script check: for reports that quote names, titles or text in another script). Named in "
    "the signature's inj: field; not in the cache key, so both share one cache.")]
CacheDir = Annotated[Path, typer.Option("--cache-dir", help="Decision cache directory.")]
# --cache-dir stays as an alias: the same option, now also taking a URL.
Cache = Annotated[str, typer.Option(
    "--cache", "--cache-dir", help="Decision cache: a directory, or redis://HOST:PORT/DB to share one cache between "
    "machines (the document index then stays in ./caches/docstore).")]
ApiBases = Annotated[list[str] | None, typer.Option(
    "--api-base", help="Base URL of an OpenAI-compatible or other server. Give it several times for several servers "
    "of the same model: litellm's Router spreads the calls and fails over.")]
RouterConfig = Annotated[Path | None, typer.Option(
    "--router", help="A litellm Router config (YAML or JSON, `model_list` [+ `router_settings`]); its deployments "
    "of --model serve the run.", exists=True, dir_okay=False)]
Timeout = Annotated[float, setting(
    ModelSettings, "timeout", "--timeout",
    help="Seconds per request attempt before it is abandoned and retried (not in the signature).")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the decision cache.")]
# The input options' formats, as judge.formats.registry lists them (docs/inputs.md has the table).
NUGGET_FORMATS = (f"files or directories of *.json / *.jsonl (.gz too) holding {registry.listing('nuggets')}; one bank "
                  "per request")
REPORT_FORMATS = registry.listing("reports")
REQUEST_FORMATS = registry.listing("requests")
DOCUMENT_FORMATS = registry.listing("documents")
Policy = Annotated[str, setting(
    JudgeSettings, "policy", "--citation-policy",
    help=f"How several citations must support a sentence: {', '.join(CITATION_POLICIES)}.")]
Prompts = Annotated[Path | None, typer.Option("--prompts", help="Directory of prompt templates (default: prompts/).",
                                              exists=True, file_okay=False)]
def under_folders(value: Path | None) -> Path | None:
    """Callback for output paths: the nearest existing folder above `value` must be a folder, not a file
    (`--out results.tsv/run1`); otherwise creating it fails only after the work is done."""
    if value is not None:
        existing = next((parent for parent in value.parents if parent.exists()), None)
        if existing is not None and not existing.is_dir():
            raise typer.BadParameter(f"{existing} is a file, not a folder: {value} cannot be created under it")
    return value


# file_okay=False: `--out` naming an existing file is a usage error before anything runs (not after judging)
Out = Annotated[Path, typer.Option("--out", "-o", help="Output directory.", file_okay=False, writable=True,
                                   callback=under_folders)]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")]
Logprobs = Annotated[bool | None, typer.Option(
    "--logprobs/--no-logprobs", help="Ask the model for token log-probabilities and record each decision's "
    "confidence. Default: on for the embedded judge, off for hosted models (not every provider accepts it).")]
ReasoningEffort = Annotated[str | None, typer.Option(
    "--reasoning-effort", callback=lambda value: value if value is None else one_of(
        value, settings.choices_of(ModelSettings, "reasoning_effort")),
    help="How hard a reasoning judge thinks before it answers: low, medium or high (litellm's reasoning_effort: "
    "OpenAI's effort, Anthropic's and Gemini's thinking budgets). Passed where litellm passes it on, elsewhere dropped "
    "with a note; in the signature and the cache key. Refused for the embedded judge, which has no reasoning mode. "
    "Thinking counts against --max-tokens: raise it.")]
KeepReasoning = Annotated[bool, typer.Option(
    "--keep-reasoning", help="Keep what a reasoning judge thought before it answered (a <think> block, "
    "reasoning_content) in each decision's record of judgments.jsonl, as `reasoning`. Never read as the answer.")]

DEFAULT_CACHE = DEFAULT_CACHE_DIR
DEFAULT_CACHE_TARGET = str(DEFAULT_CACHE_DIR)


def judge_thresholds(option: str | None, settings: ModelSettings, prompts: Path | None) -> Thresholds | None:
    """--thresholds as eval, calibrate and the nugget commands apply it (judge.judging.thresholds.choose_thresholds
    decides), with its one-line notice printed first: which rules the judge applies, or that a file was fitted for
    another judge."""
    choice = choose_thresholds(option, settings, prompts)
    check_confidence_for(settings, JudgeSettings(thresholds=choice.rules))  # refused before a notice says they apply
    if choice.notice:
        console.print(choice.notice, highlight=False, soft_wrap=True)
    return choice.rules


# Prediction-powered estimates from a human sample (judge.run.prediction_powered; docs/ppi.md).
Human = Annotated[list[Path] | None, typer.Option(
    "--human", help="Human judgments (the judgments format, outcomes or decisions) of a sample of the judged "
    "reports: adds prediction-powered estimates with intervals (ppi.tsv, ppi-pairs.tsv, ppi.json).")]
# Their rules, and the refusal of either without --human, are judge.settings.HumanSample's, which the API applies.
Sample = Annotated[str, setting(
    settings.HumanSample, "sample", "--sample", help="How the --human reports were chosen: 'reports' (at random, "
    "stratified by request where every request has one) or 'requests' (whole requests at random, every report of "
    "each judged).")]
Confidence = Annotated[float, setting(
    settings.HumanSample, "confidence", "--confidence", help="Confidence level of the --human intervals (e.g. 0.95).")]


# Provider batch jobs (judge.llm.batch; docs/batch.md): eval, nuggets create and pool, calibrate take them alike.
Batch = Annotated[bool, typer.Option(
    "--batch", help="Ask every decision not in the cache through the provider's batch jobs (about half the online "
    "price; answers within the provider's window), in rounds: openai, azure, hosted_vllm and litellm_proxy models "
    "(docs/batch.md). A killed command started again polls its jobs instead of paying twice.")]
BatchPoll = Annotated[float, number(
    "--batch-poll", bounds=settings.SECONDS, metavar="SECONDS",
    help="With --batch: seconds between two looks at a running job.")]


# Panels of judges (judge.judging.panel; docs/models.md): eval and calibrate take them alike.
PanelJudge = Annotated[list[str] | None, typer.Option(
    "--panel-judge", help="A judge of a panel, given once per judge (two or more): MODEL, or "
    "MODEL,prompts=DIR,api_base=URL (its own prompt directory and server; the other judges' are --prompts and "
    "--api-base). Every judge answers every decision; the panel's verdict is the --vote.")]
Vote = Annotated[str | None, typer.Option(
    "--vote", callback=lambda value: value if value is None else one_of(value, get_args(labels.Vote)),
    help="How a panel votes per decision: majority (a tie gives the negative verdict), unanimous (yes only if every "
    "judge says yes) or any (yes if any judge says yes). Default: majority.")]


def panel_members(specs: list[str] | None, vote: str | None, model: ModelSettings, prompts: Path | None
                  ) -> tuple[PanelMember, ...]:
    """`--panel-judge` as panel members: MODEL, or MODEL,prompts=DIR,api_base=URL; what a judge does not give is
    --prompts and --api-base, its other model settings are those of --max-tokens, --logprobs, --threads and
    --kernels. Empty without --panel-judge (typer.BadParameter for a --vote without it, or a malformed judge)."""
    if not specs:
        if vote is not None:
            raise typer.BadParameter("--vote applies to a panel: give --panel-judge once per judge (two or more)",
                                     param_hint="--vote")
        return ()
    members = []
    for spec in specs:
        name, *pairs = [part.strip() for part in spec.split(",")]
        given = dict(pair.partition("=")[::2] for pair in pairs)
        unknown = sorted(set(given) - {"prompts", "api_base"})
        if not name or unknown or any(not value for value in given.values()):
            raise typer.BadParameter(f"{spec!r}: write MODEL or MODEL,prompts=DIR,api_base=URL"
                                     + (f" ({', '.join(unknown)} is not one of them)" if unknown else ""),
                                     param_hint="--panel-judge")
        folder = Path(given["prompts"]) if "prompts" in given else prompts
        if folder is not None and not folder.is_dir():
            raise typer.BadParameter(f"{spec!r}: prompt directory {folder} does not exist", param_hint="--panel-judge")
        members.append(PanelMember(replace(model, model=name, api_base=given.get("api_base", model.api_base)),
                                   folder))
    return tuple(members)


