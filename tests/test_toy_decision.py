"""A new decision is its module and its prompt, plus its name in the flowchart: nothing else.

A copy of the package gets exactly those three edits for the toy decision of tests/data/toy_decision (the module
under judge/judging/decisions/, the prompt under prompts/, one `diamond(...)` line and one `Question(...)` in
`flow`), and the rest of the machinery takes it unedited: the registry, the signature, the decision cache, the
fake judge's responders, the generated docs table, the judgments reader and the shipped support threshold (keyed
on supports_citation's own prompt and schema, so a new decision keeps it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.testing import FakeEndpoint, smart_responder

ROOT = Path(__file__).resolve().parents[1]
TOY = Path(__file__).parent / "data" / "toy_decision"
EXAMPLES = ROOT / "examples"

REGISTER_AFTER = 'REPEATED_CLAIM = diamond("repeated_claim")'
ASK_AFTER = "    repeated = yield from _verdict(Question(REPEATED_CLAIM), result)\n"


def add_the_toy(checkout: Path) -> None:
    """The only edits a new decision needs: its module, its prompt, its name in the flowchart."""
    shutil.copy(TOY / "hedged_claim.py", checkout / "judge" / "judging" / "decisions" / "hedged_claim.py")
    shutil.copy(TOY / "hedged_claim.md", checkout / "prompts" / "hedged_claim.md")
    flowchart = checkout / "judge" / "judging" / "flowchart.py"
    source = flowchart.read_text(encoding="utf-8")
    assert source.count(REGISTER_AFTER) == 1 and source.count(ASK_AFTER) == 1, "the flowchart moved: update anchors"
    source = source.replace(REGISTER_AFTER, REGISTER_AFTER + '\nHEDGED_CLAIM = diamond("hedged_claim")')
    # asked where a new uncited claim is decided, recorded, and leading to the outcome it led to before
    source = source.replace(ASK_AFTER, ASK_AFTER + "    yield from _verdict(Question(HEDGED_CLAIM), result)\n")
    flowchart.write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the package (code, prompts, docs hooks) with the toy decision added as a user would."""
    root = tmp_path_factory.mktemp("checkout")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "judge", root / "judge", ignore=ignore)
    shutil.copytree(ROOT / "prompts", root / "prompts")
    shutil.copytree(ROOT / "docs" / "hooks", root / "docs" / "hooks", ignore=ignore)
    add_the_toy(root)
    return root


def run(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(checkout), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=checkout, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_copy_runs_its_own_package(checkout):
    done = run(checkout, "-c", "import judge; print(judge.__file__)")
    assert Path(done.stdout.strip()).is_relative_to(checkout)


def test_the_toy_decision_is_registered_signed_and_documented_without_other_edits(checkout):
    probe = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, "docs/hooks")
        import decision_table
        from judge.judging.decisions import REGISTRY
        from judge.judging.fingerprints import decision_schema_hash, prompt_hashes, prompts_tag, schema_hash
        from judge.judging.thresholds import choose_thresholds
        from judge.llm.embedded.weights import EMBEDDED_MODEL
        from judge.settings import ModelSettings
        choice = choose_thresholds(None, ModelSettings(EMBEDDED_MODEL), None)
        print(json.dumps({"names": REGISTRY.names, "prompts": prompts_tag(prompt_hashes(None)),
                          "schema": schema_hash(), "sc_schema": decision_schema_hash("supports_citation"),
                          "table": decision_table.render(), "thresholds": choice.rules is not None,
                          "notice": choice.notice}))
    """)
    found = json.loads(run(checkout, "-c", probe).stdout.splitlines()[-1])
    from judge.judging.decisions import REGISTRY
    from judge.judging.fingerprints import decision_schema_hash, prompt_hashes, prompts_tag, schema_hash
    from judge.judging.prompts import load_template

    toy_hash = load_template("hedged_claim", TOY).short_hash
    assert found["names"] == [*REGISTRY.names, "hedged_claim"]
    assert found["prompts"] == f"{prompts_tag(prompt_hashes(None))}+hc={toy_hash}"
    assert found["schema"] != schema_hash()  # the toy's response contract is part of the schema hash
    assert found["sc_schema"] == decision_schema_hash("supports_citation")
    assert ("| `hedged_claim` | `hc` | `prompts/hedged_claim.md` | hedged / not_hedged | yes | "
            "Does it hedge its claim? |") in found["table"].splitlines()
    # the shipped support threshold guards supports_citation, which the toy leaves as it was: still applied
    assert found["thresholds"] and found["notice"].startswith("thresholds: embedded-thresholds.json")


def test_the_toy_decision_is_judged_cached_and_answered_by_the_fake_judge(checkout, tmp_path):
    cache = tmp_path / "cache"

    def evaluate(ep: FakeEndpoint, out: Path) -> subprocess.CompletedProcess:
        return run(checkout, "-m", "judge.cli.app", "eval", str(EXAMPLES / "reports"), "--requests",
                   str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets",
                   str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base, "--api-key", "x",
                   "--cache-dir", str(cache), "--out", str(out))

    with FakeEndpoint(smart_responder) as ep:
        evaluate(ep, tmp_path / "first")
        asked = ep.calls
        evaluate(ep, tmp_path / "again")
        assert ep.calls == asked  # every decision, the toy's too, from the cache the second time
    records = [json.loads(line) for line in (tmp_path / "first" / "judgments.jsonl").read_text().splitlines()]
    toy = [d for r in records for s in r["sentences"] for d in s["decisions"] if d["decision"] == "hedged_claim"]
    # the smart fake judge has no rule for the toy: it answers with a minimal valid instance of the toy's schema
    assert toy and all(d["verdict"] is False and d["prompt_hash"] for d in toy)
    assert all("+hc=" in r["signature"] for r in records)
    # the judgments reader takes the toy's records: scoring the judgments alone gives the scores eval wrote
    run(checkout, "-m", "judge.cli.app", "score", str(tmp_path / "first" / "judgments.jsonl"), "--nuggets",
        str(EXAMPLES / "nuggets"), "--out", str(tmp_path / "rescored"))
    assert (tmp_path / "rescored" / "scores.tsv").read_text() == (tmp_path / "first" / "scores.tsv").read_text()
    # the toy is asked after a new uncited claim is decided and changes no outcome: the scores are the shipped ones
    shipped = tmp_path / "shipped"
    with FakeEndpoint(smart_responder) as ep:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        subprocess.run([sys.executable, "-m", "judge.cli.app", "eval", str(EXAMPLES / "reports"), "--requests",
                        str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets",
                        str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base, "--api-key",
                        "x", "--cache-dir", str(tmp_path / "shipped-cache"), "--out", str(shipped)],
                       check=True, capture_output=True, env=env, cwd=ROOT, timeout=600)

    def outcomes(path: Path) -> list[list[int | None]]:
        return [[s["outcome"] for s in json.loads(line)["sentences"]]
                for line in (path / "judgments.jsonl").read_text().splitlines()]

    assert outcomes(tmp_path / "first") == outcomes(shipped)
    assert [line.split("\t")[1:] for line in (tmp_path / "first" / "scores.tsv").read_text().splitlines()] == \
        [line.split("\t")[1:] for line in (shipped / "scores.tsv").read_text().splitlines()]
