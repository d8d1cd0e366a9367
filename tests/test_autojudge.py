"""argue-judge as a TREC AutoJudge judge: the adapter on the bundled example and on the framework's spot-check
dataset, against the fake endpoint (no real model). Skipped when the `autojudge` extra is not installed."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest


def _offline_nltk_stand_ins() -> None:
    """autojudge-base calls nltk.download('punkt', 'stopwords') when it is imported; offline (as in CI here) that
    fails and the import raises. Its text normaliser is the only user of that data and the adapter never calls
    it, so empty stand-ins let the framework import without pretending to be NLTK's data anywhere else."""
    nltk = pytest.importorskip("nltk")
    try:
        nltk.data.find("tokenizers/punkt")
        nltk.data.find("corpora/stopwords")
        return
    except LookupError:
        pass
    root = Path(tempfile.mkdtemp(prefix="argue-nltk-stand-ins-"))
    (root / "tokenizers" / "punkt").mkdir(parents=True)
    (root / "corpora" / "stopwords").mkdir(parents=True)
    (root / "corpora" / "stopwords" / "english").write_text("")
    nltk.data.path.insert(0, str(root))


_offline_nltk_stand_ins()
autojudge_base = pytest.importorskip("autojudge_base")

from autojudge_base import LlmConfigBase, Request, load_requests_from_file  # noqa: E402
from autojudge_base.nugget_data import load_nugget_banks_from_directory  # noqa: E402
from autojudge_base.report import load_report  # noqa: E402

from judge.adapters.autojudge import MEASURES, ArgueAutoJudge, litellm_model  # noqa: E402
from judge.llm.client import ModelSettings  # noqa: E402
from judge.run.evaluate import evaluate  # noqa: E402
from judge.run.inputs import Inputs  # noqa: E402
from judge.run.spec import EvalSpec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SPOT_CHECK = ROOT / "tests" / "data" / "autojudge-spot-check"


def config(ep, cache: Path | None = None) -> LlmConfigBase:
    return LlmConfigBase(model="fake", base_url=ep.api_base, api_key="x", cache_dir=cache)


def rows(board) -> dict[tuple[str, str, str], float]:
    return {(e.run_id, e.topic_id, m): v for e in board.entries for m, v in e.values.items()}


def test_model_names_get_a_provider_only_behind_an_endpoint():
    assert litellm_model("fake", "http://127.0.0.1:1/v1") == "openai/fake"
    assert litellm_model("meta-llama/Llama-3.3-70B", "http://h/v1") == "openai/meta-llama/Llama-3.3-70B"
    assert litellm_model("ollama/llama3", "http://h") == "ollama/llama3"
    assert litellm_model("gpt-4o-mini", None) == "gpt-4o-mini"


def test_bundled_example_gives_the_same_scores_as_argue_judge_eval(endpoint, tmp_path):
    reports = [r for path in sorted((EXAMPLES / "reports").glob("*.jsonl")) for r in load_report(path)]
    topics = load_requests_from_file(EXAMPLES / "requests.jsonl")
    judge = ArgueAutoJudge(index_dir=tmp_path / "idx")

    # nuggets= (our reader on the files): the framework's NuggetBank model would drop the `absence` flags.
    board = judge.judge(reports, topics, config(endpoint), nugget_banks=None, corpus=str(EXAMPLES / "docs.jsonl"),
                        nuggets=[EXAMPLES / "nuggets"], filebase=str(tmp_path / "out" / "argue"))

    # The same inputs through our own library path (what `argue-judge eval` runs), same fake judge.
    direct = evaluate(Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                                  [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "idx2"),
                      EvalSpec.of(model=ModelSettings("openai/fake", endpoint.api_base, "x"), cache=None))
    expected = {(r.run_id, r.request_id, r.metric): r.value for r in direct.scores.rows()
                if r.request_id != "all" and r.metric in MEASURES}
    got = {k: v for k, v in rows(board).items() if k[1] != "all"}
    assert got.keys() == expected.keys() and len(got) == 3 * 2 * len(MEASURES)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, nan_ok=True), key
    # The framework's `all` rows are its mean over topics.
    for run in {k[0] for k in got}:
        f1 = [v for (r, t, m), v in got.items() if r == run and m == "F1"]
        assert rows(board)[(run, "all", "F1")] == pytest.approx(sum(f1) / len(f1))
    signature = judge.last_evaluation.signature.short()
    assert all(signature in spec.description for spec in board.spec.measures)
    assert "openai/fake" in judge.last_evaluation.judge_signature.short()
    assert (tmp_path / "out" / "argue.argue" / "judgments.jsonl").is_file()
    assert judge.last_evaluation.usage.failures == 0


def test_framework_nugget_banks_reach_us_intact_but_for_absence():
    """The framework's NuggetBanks, dumped and read by our reader, equal our reading of the same files, except
    that its model has no `absence` field (documented; pass such banks with nuggets=)."""
    from judge.adapters.autojudge import _banks
    from judge.formats import read_nugget_banks

    ours = read_nugget_banks(EXAMPLES / "nuggets")
    theirs = _banks(load_nugget_banks_from_directory(EXAMPLES / "nuggets"))
    assert any(n.absence for bank in ours.values() for n in bank.nuggets)
    stripped = {rid: bank.model_copy(update={"nuggets": tuple(n.model_copy(update={"absence": False})
                                                               for n in bank.nuggets)})
                for rid, bank in ours.items()}
    assert theirs == stripped


def test_spot_check_dataset(endpoint, tmp_path):
    """The framework's own spot-check dataset: three runs on Cranfield topic 28, no nugget bank."""
    queries = [json.loads(line) for line in (SPOT_CHECK / "queries.jsonl").read_text().splitlines() if line.strip()]
    topics = [Request(request_id=q["qid"], title=q["query"]) for q in queries]  # as load_requests_from_irds does
    reports = [r for path in sorted((SPOT_CHECK / "runs").glob("*.jsonl")) for r in load_report(path)]
    judge = ArgueAutoJudge(index_dir=tmp_path / "idx")

    board = judge.judge(reports, topics, config(endpoint), corpus=str(SPOT_CHECK))

    values = rows(board)
    runs = {"my_best_run_01", "my_best_run_02", "my_best_run_02_citations"}
    assert {k[0] for k in values} == runs and {k[1] for k in values} == {"28", "all"}
    for run in runs:
        assert math.isnan(values[(run, "28", "NuggetRecall")])  # no nugget bank: undefined, never 0
        # Without nuggets no sentence can reach #3 (or #8), ARGUE's only positive outcomes: precision is 0 for
        # every run, so ARGUE cannot rank these runs; the adapter says so instead of inventing an order.
        assert values[(run, "28", "SentencePrecision")] == 0.0 and math.isnan(values[(run, "all", "F1")])
    assert any("no nugget bank" in w for w in judge.last_warnings)
    assert judge.last_evaluation.usage.failures == 0 and endpoint.calls > 0


def test_missing_documents_is_an_input_error(endpoint, tmp_path):
    from judge.errors import InputError

    reports = load_report(SPOT_CHECK / "runs" / "my_best_run_01.jsonl")
    with pytest.raises(InputError, match="no documents"):
        ArgueAutoJudge(index_dir=tmp_path).judge(reports, [Request(request_id="28", title="t")], config(endpoint))
    assert endpoint.calls == 0
