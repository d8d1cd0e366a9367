"""argue-judge as a TREC AutoJudge judge (`pip install -e ".[autojudge]"`, package `autojudge-base`).

The framework (github.com/trec-auto-judge/auto-judge-code) calls a judge with its own objects:

    judge(rag_responses: Iterable[Report], rag_topics: Sequence[Request], llm_config, nugget_banks=None,
          qrels=None, corpus=None, **kwargs) -> Leaderboard

`ArgueAutoJudge.judge` maps them onto ours and runs the same library path as `argue-judge eval`:
- reports, topics and nugget banks are serialised back to their wire format (the framework's own pydantic
  dump) and read by *our* readers, so there is exactly one reader of each format and the same input errors;
- nugget banks come from `nugget_banks` (the framework's NuggetBanks, NuggetizerNuggetBanks or RAGTIME 26
  banks) or from `nuggets=` paths read directly. The framework's NuggetBank model has no `absence` field, so an
  absence nugget loses its flag on the way in: pass such banks as files (`nuggets=`);
- documents come from `corpus` (a JSONL file, or a directory holding `corpus.jsonl[.gz]`, e.g. an ir_datasets
  export such as the spot-check dataset), from `docs=` paths, and from documents embedded in the reports;
- `llm_config` (the framework's `LlmConfigBase` / `MinimaLlmConfig`: model, base_url, api_key, cache_dir, raw)
  becomes our ModelSettings; a model behind a `base_url` is addressed as an OpenAI-compatible endpoint;
- the result is a `Leaderboard` with rows `run_id topic_id measure value` and the framework's `all` rows; every
  measure's description carries our score signature, so the framework's `*.measures.yml` records it.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import ConfigurationError, InputError
from judge.formats import DocumentStore, citation_warnings, read_nugget_banks, read_reports, read_requests
from judge.formats.lock import output_lock
from judge.judging.walker import JudgeSettings
from judge.llm.cache.store import DEFAULT_CACHE_DIR
from judge.llm.client import ModelSettings
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.outputs import Evaluation, write_outputs
from judge.run.spec import EvalSpec, Execution


def framework() -> Any:
    """The autojudge_base module, imported on first use: importing it downloads NLTK data, which must not happen
    when argue-judge (or a test collecting this module) merely imports the adapter."""
    try:
        import autojudge_base
        import autojudge_base.nugget_data  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ConfigurationError('the AutoJudge adapter needs the extra: pip install -e ".[autojudge]"') from exc
    except LookupError as exc:  # pragma: no cover - autojudge-base downloads NLTK data when imported
        raise ConfigurationError("autojudge-base needs NLTK's punkt and stopwords data and could not download it: "
                                 "run `python -m nltk.downloader punkt stopwords` where the network is reachable"
                                 ) from exc
    return autojudge_base


log = logging.getLogger(__name__)

# The ARGUE headline measures and what they mean, for the framework's measures.yml.
MEASURES: dict[str, str] = {
    "F1": "ARGUE F1: harmonic mean of sentence precision and nugget recall",
    "SentencePrecision": "ARGUE sentence precision: positive outcomes (#3, #8) over non-neutral outcomes",
    "NuggetRecall": "ARGUE nugget recall: nuggets earned over nuggets in the request's bank",
    "NuggetRecall(weighted=True)": "ARGUE nugget recall with vital = 2, okay = 1",
}
_CORPUS_FILES = ("corpus.jsonl", "corpus.jsonl.gz", "docs.jsonl", "docs.jsonl.gz")


@dataclass
class ArgueAutoJudge:
    """A `LeaderboardJudgeProtocol` judge. It neither creates nuggets nor qrels (use a bank made elsewhere)."""

    judge_settings: JudgeSettings = JudgeSettings()
    concurrency: int = 4
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 512
    index_dir: Path = DEFAULT_CACHE_DIR / "docstore"

    @property
    def nugget_banks_type(self) -> type:
        return framework().nugget_data.NuggetBanks

    def __post_init__(self) -> None:
        self.last_evaluation: Evaluation | None = None
        self.last_warnings: list[str] = []

    def judge(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
              nugget_banks: Any = None, qrels: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        responses = list(rag_responses)
        inputs = Inputs(
            reports=read_reports(_jsonl(_report_dump(r) for r in responses)),
            requests=read_requests(_jsonl(t.model_dump(mode="json", exclude_none=True) for t in rag_topics)),
            banks=read_nugget_banks(kwargs["nuggets"]) if kwargs.get("nuggets") else _banks(nugget_banks),
            documents=_documents(responses, corpus, kwargs.get("docs"), Path(kwargs.get("index_dir", self.index_dir))),
        )
        inputs.check()
        spec = EvalSpec(model=self.model_settings(llm_config), judge=self.judge_settings,
                        execution=Execution(concurrency=self.concurrency, cache=_cache_dir(llm_config)))
        evaluation = evaluate(inputs, spec)
        self.last_evaluation = evaluation
        self.last_warnings = citation_warnings(inputs.reports.cited, inputs.documents) + evaluation.warnings
        for note in self.last_warnings:
            log.warning("%s", note)
        if kwargs.get("filebase"):  # the runner's output stem: keep our judgments beside its leaderboard
            out = Path(f"{kwargs['filebase']}.argue")
            with output_lock(out, "eval"):
                write_outputs(evaluation, out)
        topic_ids = [str(t.request_id) for t in rag_topics]
        return leaderboard(evaluation, topic_ids)

    def model_settings(self, llm_config: Any) -> ModelSettings:
        """The framework's LLM configuration as ours. `raw` (MinimaLlmConfig's full dict) may set sampling."""
        model = getattr(llm_config, "model", None)
        if not model:
            raise ConfigurationError("llm_config has no model; set llm_config.model (e.g. LLM_MODEL)")
        base_url = getattr(llm_config, "base_url", None)
        raw = getattr(llm_config, "raw", None) or {}
        return ModelSettings(
            model=litellm_model(model, base_url), api_base=base_url, api_key=getattr(llm_config, "api_key", None),
            temperature=float(raw.get("temperature", self.temperature)), seed=raw.get("seed", self.seed),
            max_tokens=int(raw.get("max_tokens", self.max_tokens)),
            timeout=float(raw.get("timeout_s", getattr(llm_config, "timeout_s", 300.0))))

    def create_nuggets(self, *args: Any, **kwargs: Any) -> None:
        return None  # argue-judge judges against existing nugget banks; it does not write them

    def create_qrels(self, *args: Any, **kwargs: Any) -> None:
        return None


def litellm_model(model: str, base_url: str | None) -> str:
    """AutoJudge names a model as its OpenAI-compatible endpoint knows it; litellm wants a provider prefix."""
    import litellm

    provider = model.split("/", 1)[0] if "/" in model else None
    if base_url and provider not in litellm.provider_list:
        return f"openai/{model}"
    return model


def leaderboard(evaluation: Evaluation, topic_ids: Sequence[str]) -> Any:
    aj = framework()
    LeaderboardSpec, MeasureSpec, LeaderboardBuilder = aj.LeaderboardSpec, aj.MeasureSpec, aj.LeaderboardBuilder
    signature = evaluation.signature.short()
    spec = LeaderboardSpec(measures=tuple(MeasureSpec(name, float, f"{text}. argue-judge signature: {signature}")
                                          for name, text in MEASURES.items()))
    values: dict[tuple[str, str], dict[str, float]] = {}
    for row in evaluation.scores.rows():
        if row.request_id != "all" and row.metric in MEASURES:
            values.setdefault((row.run_id, row.request_id), {})[row.metric] = row.value
    builder = LeaderboardBuilder(spec)
    for (run_id, topic_id), measured in sorted(values.items()):
        # A measure undefined for a topic (no nugget bank: recall) stays NaN, as in scores.tsv; never 0.
        builder.add(run_id=run_id, topic_id=topic_id,
                    values={m: measured.get(m, math.nan) for m in MEASURES})
    return builder.build(expected_topic_ids=list(topic_ids), on_missing="fix_aggregate")


def _jsonl(records: Iterable[dict[str, Any]]) -> str:
    # A str with a newline is literal JSONL to our readers; errors then name `<string>:<line>`.
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) or "\n"


def _report_dump(report: Any) -> dict[str, Any]:
    # The framework mirrors `responses` into `answer` (and back); our reader rightly refuses both at once.
    data = report.model_dump(mode="json", exclude_none=True, exclude={"documents", "answer", "is_ragtime"})
    if "responses" not in data and report.answer is not None:
        data["answer"] = report.model_dump(mode="json", include={"answer"})["answer"]
    return data


def _banks(nugget_banks: Any) -> dict:
    if nugget_banks is None or not getattr(nugget_banks, "banks", None):
        return {}
    return read_nugget_banks(_jsonl(b.model_dump(mode="json", exclude_none=True) for b in nugget_banks.banks.values()))


def _documents(responses: list[Any], corpus: str | None, docs: Any, index_dir: Path) -> DocumentStore:
    sources: list[str | Path] = [Path(d) for d in ([docs] if isinstance(docs, (str, Path)) else docs or [])]
    if corpus:
        path = Path(corpus)
        if path.is_dir():
            found = [path / name for name in _CORPUS_FILES if (path / name).is_file()]
            sources += found or [path]
        elif path.is_file():
            sources.append(path)
        else:
            raise InputError("corpus is neither a file nor a directory; argue-judge reads documents from JSONL "
                             "(ir_datasets IDs are not supported: export the corpus first)", corpus)
    embedded = {doc_id: doc for r in responses for doc_id, doc in (getattr(r, "documents", None) or {}).items()}
    if embedded:
        sources.append(_jsonl({"doc_id": doc_id, "title": doc.title, "text": doc.text}
                              for doc_id, doc in embedded.items()))
    if not sources:
        raise InputError("no documents: pass corpus= (a JSONL file or a directory with corpus.jsonl[.gz]), docs=, "
                         "or reports with embedded documents; ARGUE checks every citation against its document")
    return DocumentStore.open(sources, index_dir)


def _cache_dir(llm_config: Any) -> Path | None:
    # The framework's convention: no cache_dir means no caching. Ours lives in a subdirectory of theirs.
    cache = getattr(llm_config, "cache_dir", None)
    return Path(cache) / "argue-judge" if cache else None
