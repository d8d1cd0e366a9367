"""Every CLI option that changes a number is in that number's signature; signatures have short, long and JSON
forms and change when what they name changes."""

from __future__ import annotations

import dataclasses
import json

import pytest
import typer.main

from judge.cli.app import app
from judge.judging.signature import BaselineSignature, CalibrationSignature, JudgeSignature, ScoreSignature
from judge.settings import (
    DecisionThreshold,
    JudgeSettings,
    ModelSettings,
    PassagePolicy,
    RetryPolicy,
    Thresholds,
)

# option (python parameter name) -> the signature field that records it
RESULT_CHANGING: dict[str, dict[str, str]] = {
    "eval": {"model": "model", "temperature": "temperature", "seed": "seed", "max_tokens": "max_tokens",
             "citation_policy": "citation_policy", "truncate": "truncate", "max_doc_chars": "passages",
             "prompts": "prompts", "on_injection": "on_injection", "logprobs": "logprobs",
             "thresholds": "thresholds", "injection_detector": "injection_detector",
             "reasoning_effort": "reasoning_effort", "panel_judge": "panel", "vote": "vote"},
    "score": {"citation_policy": "citation_policy", "human": "human", "sample": "sample", "confidence": "confidence"},
    "merge": {},   # its numbers are those the shards' judgments give; every shard must carry one judge signature
    "calibrate": {"wice_partial": "wice_partial", "sample": "sample", "exclude": "exclude", "seed": "resample_seed",
                  "n_boot": "n_boot",
                  "model": "judge.model", "max_tokens": "judge.max_tokens", "max_doc_chars": "judge.passages",
                  "prompts": "judge.prompts", "against": "against", "attack": "attacks",
                  "attacks_file": "attacks_hash", "logprobs": "judge.logprobs", "fit_threshold": "fit",
                  "thresholds": "judge.thresholds", "on_injection": "judge.on_injection",
                  "injection_detector": "judge.injection_detector",
                  "fit_metric": "fit", "panel_judge": "judge.panel", "vote": "judge.vote"},
    # baselines: the `key=` the option's value is written under in the scores-TSV signature line
    "baseline exam": {"qa": "qa=", "k": "k=", "match": "match=", "f1_threshold": "tokenF1>=",
                      "null_threshold": "null_threshold="},
    "baseline rouge": {"multi": "multi_ref=", "stem": "stemming=", "stopwords": "stopwords="},
    "baseline pa-bleu": {"smooth": "smooth:", "smooth_value": "smooth:"},
    "baseline pa-meteor": {},
    # nuggets: the piece of the creator signature (judge.nuggets.api._signature) the option's value is written in
    "nuggets create": {"model": "judge:", "temperature": "t=", "seed": "seed=", "prompts": "create:",
                       "max_nuggets": "K=", "max_docs": "M=", "thresholds": "thr:", "logprobs": "thr:"},
    "nuggets pool": {"model": "judge:", "temperature": "t=", "seed": "seed=", "prompts": "pool:",
                     "thresholds": "thr:", "logprobs": "thr:"},
    # (logprobs changes a bank only by letting thresholds apply, which thr: records)
}
# --human and its options change the prediction-powered estimates, which the ScoreSignature of ppi.tsv signs
PPI_OPTIONS = {"human": "human", "sample": "sample", "confidence": "confidence"}
SIGNED_BY_THE_PPI_SIGNATURE = {"eval": set(PPI_OPTIONS)}
# options that cannot change a number, and why (inputs are the material itself; ScoreSignature counts it)
NEUTRAL: dict[str, set[str]] = {
    # max_doc_bytes refuses a run, never changes its numbers; price_per_1k only prices the budget;
    # max_failed_fraction only decides the exit code; router and timeout pick servers and wait times, never an
    # answer; shard and resume choose which reports are judged now (the score signature counts the reports);
    # cache holds answers, it does not make them; threads changes llama.cpp's speed, not its answers (each output
    # row is computed by one thread in the same order: tests/test_embedded_llm.py checks 1 vs 2 threads);
    # give_up_after, like timeout, decides when a server is waited for no longer, never an answer (what it leaves
    # unasked is failed, and the score signature counts failures). kernels choose llama.cpp's CPU kernel path, whose
    # rounding can differ, but the cache does not key it (a rerun replays the answers whichever path made them), so
    # run-summary.json records the path, not the signature; keep_reasoning only adds the judge's reasoning to each
    # record, never reads it as the answer (tests/test_reasoning.py)
    "eval": {"keep_reasoning", "reports", "requests", "docs", "nuggets", "api_base", "router", "api_key", "timeout",
             "concurrency",
             "max_cost", "cache", "no_cache", "shard", "resume", "with_baselines", "gold", "out", "debug",
             "max_doc_bytes", "price_per_1k", "max_failed_fraction", "view", "threads", "give_up_after", "kernels",
             "ray", "workers",  # who judges: the outputs are the bytes one process writes (tests/test_ray_*.py)
             "batch", "batch_poll", "dry_run"},  # how answers are fetched: the online path's bytes (test_batch.py)
    "score": {"judgments", "nuggets", "out", "debug"},
    "merge": {"shards", "out", "debug"},
    "calibrate": {"attributionbench", "wice", "nuggets", "docs", "human", "judged", "api_base", "api_key",
                  "concurrency", "threads", "kernels", "cache_dir", "out", "plots", "debug",
                  "batch", "batch_poll"},  # how answers are fetched, as for eval (tests/test_batch_commands.py)
    "baseline exam": {"reports", "out", "nuggets", "gold", "debug"},
    "baseline rouge": {"reports", "gold", "out", "debug"},
    "baseline pa-bleu": {"reports", "gold", "out", "debug"},
    "baseline pa-meteor": {"reports", "gold", "out", "debug"},
    # the inputs, the file layout of the banks and the serving options, as for eval
    "nuggets create": {"requests", "docs", "out", "doc_lists", "gold_report", "bank_format", "api_base", "api_key",
                       "timeout", "threads", "concurrency", "cache", "no_cache", "debug", "batch", "batch_poll"},
    "nuggets pool": {"nuggets", "out", "reports", "requests", "docs", "accept", "api_base", "api_key", "timeout",
                     "threads", "concurrency", "cache", "no_cache", "debug", "batch", "batch_poll"},
}


# commands that write no number of their own: they move records between formats or show scores `score` signs;
# `sample` writes the reports to label, each with the probability it was drawn with, which is all a weighted
# estimate reads of it (ppi.tsv's signature says `sample: weighted`)
CONVERTERS = {"cache", "import", "export", "view", "sample"}


def commands() -> dict[str, list[str]]:
    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # type: ignore[attr-defined]  # built when asked (cli.app.LazyCommands)
        root.get_command(None, name)  # type: ignore[attr-defined]
    found = {}
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        for sub_name, sub in (subcommands or {None: command}).items():
            key = f"{name} {sub_name}" if sub_name else name
            found[key] = [p.name for p in sub.params]
    return found


def test_every_option_of_every_number_producing_command_is_declared():
    found = {k: v for k, v in commands().items() if k.split()[0] not in CONVERTERS}
    assert sorted(found) == sorted(RESULT_CHANGING)
    for command, options in found.items():
        ppi = SIGNED_BY_THE_PPI_SIGNATURE.get(command, set())
        undeclared = set(options) - set(RESULT_CHANGING[command]) - NEUTRAL[command] - ppi
        assert not undeclared, f"{command}: say whether {sorted(undeclared)} change a number (and sign them)"
        stale = (set(RESULT_CHANGING[command]) | NEUTRAL[command] | ppi) - set(options)
        assert not stale, f"{command}: {sorted(stale)} are no longer options"


def field_names(cls, prefix: str = "") -> set[str]:
    names = set()
    for f in dataclasses.fields(cls):
        names.add(prefix + f.name)
        if f.name == "judge" and cls is CalibrationSignature:
            names |= field_names(JudgeSignature, "judge.")
    return names


@pytest.mark.parametrize(("command", "cls"), [("eval", JudgeSignature), ("score", ScoreSignature),
                                              ("calibrate", CalibrationSignature)])
def test_result_changing_options_map_to_signature_fields(command, cls):
    assert set(RESULT_CHANGING[command].values()) <= field_names(cls)


def test_ppi_options_map_to_score_signature_fields_and_change_it():
    assert set(PPI_OPTIONS.values()) <= field_names(ScoreSignature)
    base = ScoreSignature("j", 2, 6, 0, 0, human="6@0123abcd", sample="reports", confidence=0.95)
    for change in (dict(human="6@89abcdef"), dict(sample="requests"), dict(confidence=0.9)):
        assert dataclasses.replace(base, **change).short() != base.short()


def judge_signature(model=ModelSettings("m"), retry=RetryPolicy(), judge=JudgeSettings()) -> JudgeSignature:
    return JudgeSignature.of(model, retry, judge)


@pytest.mark.parametrize("changed", [
    dict(model=ModelSettings("other")), dict(model=ModelSettings("m", temperature=0.7)),
    dict(model=ModelSettings("m", seed=5)), dict(model=ModelSettings("m", max_tokens=99)),
    dict(retry=RetryPolicy(reasks=0)), dict(judge=JudgeSettings(policy="joint")),
    dict(judge=JudgeSettings(truncate=False)), dict(judge=JudgeSettings(passages=PassagePolicy(max_chars=100))),
    dict(judge=JudgeSettings(on_injection="penalise")), dict(model=ModelSettings("m", logprobs=True)),
    dict(judge=JudgeSettings(injection_detector="rules+learned")),
    dict(model=ModelSettings("m", reasoning_effort="low")),
    dict(judge=JudgeSettings(thresholds=Thresholds((DecisionThreshold("supports_citation", True, 0.8),), "1234abcd"))),
])
def test_the_judge_signature_changes_with_every_setting(changed):
    assert judge_signature(**changed).short() != judge_signature().short()


def test_score_signature_names_the_citation_policy_and_round_trips_as_json():
    signature = ScoreSignature("human:alice", requests=1, reports=2, failed=0, undetermined=1, citation_policy="any")
    assert signature.short() == "human:alice|requests:1|reports:2|failed:0|undetermined:1|cite:any"
    assert ScoreSignature(**json.loads(signature.as_json())) == signature
    assert "cite: any" in signature.long()


def test_calibration_signature_has_each_seed_once_and_the_ab_prompts():
    judge = judge_signature()
    signature = CalibrationSignature(judge, items=40, n_boot=200, resample_seed=7, sample=20, wice_partial="exclude",
                                     against=(("supports_citation", "abc123"),))
    short = signature.short()
    assert short.startswith(judge.short() + "|")
    assert short.endswith("|items:40|sample:20|boot:200|resample_seed:7|wice_partial:exclude|against:sc=abc123")
    assert short.count("seed:") == 2  # the model's seed and the resampling seed, each once
    data = json.loads(signature.as_json())
    assert data["judge"]["model"] == "m" and data["against"] == {"supports_citation": "abc123"}
    assert "wice_partial" not in CalibrationSignature(judge, items=1, n_boot=1, resample_seed=0).short()


def test_calibration_signature_names_the_attacks_and_their_definitions():
    from judge.calibration.suite import attacks_hash
    from judge.defence.injection import load_attacks

    attacks = load_attacks()
    chosen = (attacks["assessor_note"], attacks["document_note"])
    signature = CalibrationSignature(judge_signature(), items=4, n_boot=10, resample_seed=0,
                                     attacks=("assessor_note", "document_note"), attacks_hash=attacks_hash(chosen))
    assert signature.short().endswith(f"|attack:assessor_note+document_note@{attacks_hash(chosen)}")
    assert json.loads(signature.as_json())["attacks"] == ["assessor_note", "document_note"]
    edited = dataclasses.replace(chosen[0], texts=chosen[0].texts[:1])
    assert attacks_hash((edited, chosen[1])) != attacks_hash(chosen)  # a changed text changes the signature
    assert "attack:" not in CalibrationSignature(judge_signature(), items=4, n_boot=10, resample_seed=0).short()


def test_the_judge_signature_names_the_injection_policy_and_the_detector():
    short = judge_signature(judge=JudgeSettings(on_injection="penalise")).short()
    assert "|inj:penalise@" in short and len(short.rsplit("@", 1)[1]) == 8


def test_the_shorter_detector_stacks_are_told_apart_in_the_signature_and_the_default_keeps_its_form():
    default = judge_signature()
    learned = judge_signature(judge=JudgeSettings(injection_detector="rules+learned"))
    assert default.injection_detector == "rules+learned+script" and learned.injection_detector == "rules+learned"
    # each stack hashes what it runs: rules+learned leaves the script check out
    assert len({learned.detector, default.detector}) == 2
    assert f"|inj:quarantine@{default.detector}" in default.short()
    assert f"|inj:quarantine@rules+learned:{learned.detector}" in learned.short()
    assert json.loads(learned.as_json())["injection_detector"] == "rules+learned"


def test_baseline_signature_keeps_ready_made_parts_and_orders_settings():
    signature = BaselineSignature.of("EXAM", "qa=fake(k=2)", ("match", "exact"), "free text")
    assert signature.short().startswith("baseline=EXAM argue-judge=")
    assert signature.short().endswith("qa=fake(k=2) match=exact free text")
    assert json.loads(signature.as_json())["settings"] == [["qa", "fake(k=2)"], ["match", "exact"], ["", "free text"]]


@pytest.mark.parametrize(("build", "default", "changed", "key"), [
    ("rouge_signature", {}, {"multi": "mean"}, "multi_ref="),
    ("rouge_signature", {}, {"stem": False}, "stemming="),
    ("rouge_signature", {}, {"stopwords": False}, "stopwords="),
    ("pa_bleu_signature", {}, {"smooth_method": "floor"}, "smooth:"),
    ("pa_bleu_signature", {"smooth_method": "add-k"}, {"smooth_method": "add-k", "smooth_value": 2.0}, "smooth"),
])
def test_baseline_options_change_their_signature(build, default, changed, key):
    module = pytest.importorskip("judge.baselines.rouge" if build.startswith("rouge") else "judge.baselines.consensus")
    before, after = getattr(module, build)(**default), getattr(module, build)(**changed)
    assert before != after and key in before and key in after


def test_the_detector_fingerprint_moves_with_the_code_not_with_its_documentation(tmp_path, monkeypatch):
    """The inj: hash reads the detector's modules as code: rewording a docstring or a comment keeps it, changing
    what a line does moves it."""
    import importlib

    from judge.judging.fingerprints import code_of

    def module(name: str, source: str):
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        return importlib.import_module(name)

    original = module("fp_a", '"""Cuts pieces."""\n\ndef cut(text):\n    """Split."""\n    return text.split()\n')
    reworded = module("fp_b", '"""Cuts a text into pieces."""\n\n\ndef cut(text):  # on whitespace\n'
                              '    """Split on whitespace."""\n    return text.split()\n')
    changed = module("fp_c", '"""Cuts pieces."""\n\ndef cut(text):\n    """Split."""\n    return text.split(".")\n')
    assert code_of(original) == code_of(reworded)
    assert code_of(original) != code_of(changed)


APPLIED = Thresholds((DecisionThreshold("supports_citation", True, 0.9),), "abcd1234")


@pytest.mark.parametrize("changed", [dict(model=ModelSettings("other")),
                                     dict(model=ModelSettings("m", temperature=0.7)),
                                     dict(model=ModelSettings("m", seed=5)), dict(max_nuggets=3), dict(max_docs=2),
                                     dict(thresholds=APPLIED)])
def test_the_creator_signature_changes_with_every_option_that_changes_a_bank(changed):
    from judge.nuggets.api import _signature
    from judge.nuggets.create import CREATION_DECISIONS
    from judge.nuggets.settings import NuggetSettings
    from judge.settings import PassagePolicy

    def signature(model=ModelSettings("m"), thresholds=None, **creation):
        tag = NuggetSettings(**creation).signed(PassagePolicy())
        return _signature("create", model, CREATION_DECISIONS, None, tag, thresholds)

    assert signature(**changed) != signature()
    for option, piece in RESULT_CHANGING["nuggets create"].items():
        assert piece in signature(thresholds=APPLIED), f"--{option} is written under {piece!r}"


def test_the_reasoning_effort_is_in_every_form_only_when_set():
    plain, low = judge_signature(), judge_signature(ModelSettings("m", reasoning_effort="low"))
    assert "effort" not in plain.short() and "reasoning_effort" not in plain.as_json()
    assert "effort" not in plain.long()
    assert low.short() == plain.short() + "|effort:low"
    assert json.loads(low.as_json())["reasoning_effort"] == "low"
    assert judge_signature(ModelSettings("m", reasoning_effort="high")).short() != low.short()
