"""Output paths (judge.formats.paths): every file a command writes is named from ids and names by one builder that
keeps it inside --out, maps unsafe characters reversibly, refuses to write where an input lives, and overwrites
only what the command wrote itself. The nugget commands run against the fake endpoint, as in test_nuggets."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.cli.errors import EXIT_INPUT
from judge.errors import InputError, OutputError
from judge.formats import paths, read_nugget_banks
from judge.formats.paths import MAX_ID_CHARS, Outputs, file_name, id_of
from judge.nuggets import api
from judge.testing import FakeEndpoint
from judge.testing.nugget_responders import nugget_responder
from tests.test_nuggets import BANKS, DOCS, EXAMPLES, REQUESTS, _pool_inputs, reviewed_candidates

runner = CliRunner()

# Ids a request may have (the readers refuse only empty ids and ids with a tab or a line break): a path
# separator, a climb out of --out, an absolute path, a NUL, a Windows device name, a hidden name, non-ASCII, an id
# longer than a file name may be, two ids that differ only in case, and ids that a careless escape would merge.
HOSTILE_IDS = ["trec/101", "trec%2f101", "trec_101", "..", ".", "a/../../../escaped", "/abs/101", "C:\\x\\101",
               "nul\x00byte", "con", "NUL.txt", ".hidden", "ends.", " spaced ", "x" * 400, "中文/題" * 60,
               "Q1", "q1", "é", "e\u0301", "~tilde", "a~1"]


@pytest.fixture(scope="module")
def endpoint():
    with FakeEndpoint(nugget_responder) as model:
        yield model


def _model(endpoint) -> dict:
    return {"model": "openai/fake", "api_base": endpoint.api_base, "api_key": "none"}


def _requests_with_ids(folder: Path, ids: list[str]) -> tuple[Path, Path]:
    """A requests file with these ids (the first example request's text) and a doc-lists file giving each one
    document, so creation asks little per request."""
    template = json.loads(REQUESTS.read_text().splitlines()[0])
    requests, lists = folder / "requests.jsonl", folder / "lists.jsonl"
    requests.write_text("".join(json.dumps({**template, "request_id": rid}) + "\n" for rid in ids))
    lists.write_text("".join(json.dumps({"request_id": rid, "doc_ids": ["ex-d01"]}) + "\n" for rid in ids))
    return requests, lists


# ---------------------------------------------------------------------------------------------------------------
# One name per id: inside --out, reversible, apart on every file system

@pytest.mark.parametrize("request_id", HOSTILE_IDS)
def test_an_id_becomes_one_safe_file_name_and_back(request_id):
    name = file_name(request_id)
    assert name.isascii() and name.isprintable() and "/" not in name and "\\" not in name and "\0" not in name
    assert not name.startswith(".") and not name.endswith((".", " ")) and " " not in name
    assert not any(c in name for c in '<>:"|?*')
    assert name.split(".")[0].lower() not in {"con", "prn", "aux", "nul"}
    assert len(name) <= MAX_ID_CHARS + 9
    if "~" not in name or len(name) < MAX_ID_CHARS:
        assert id_of(name) == request_id          # reversible
    else:
        assert request_id.startswith(id_of(name))  # cut: the file's contents hold the whole id


def test_distinct_ids_never_share_a_name_even_case_folded():
    names = [file_name(rid) for rid in HOSTILE_IDS]
    assert len({name.lower() for name in names}) == len(HOSTILE_IDS)
    # ids that differ only in case, in Unicode normalisation, or by an escape a careless mapping would undo
    assert file_name("Q1").lower() != file_name("q1").lower()
    assert file_name("é") != file_name("e\u0301")
    assert file_name("trec/101") != file_name("trec%2f101")


def test_an_empty_id_names_no_file():
    with pytest.raises(ValueError, match="empty"):
        file_name("")
    outputs = Outputs(home=Path("out"), command="test", out=Path("out"))
    with pytest.raises(InputError, match="request id '': an empty id cannot name a file"):
        outputs.for_id(Path("out"), "nuggets_", "", ".v3.json", "{}")


def test_two_ids_on_one_name_are_refused_naming_both(monkeypatch, tmp_path):
    """Digests alike (forced here) would put two banks in one file: refused, naming both ids."""
    monkeypatch.setattr(paths, "_digest", lambda text: "00000000")
    outputs = Outputs(home=tmp_path, command="test", out=tmp_path)
    outputs.for_id(tmp_path, "nuggets_", "Ab", ".v3.json", "{}")
    with pytest.raises(InputError, match=r"request ids 'Ab' and 'AB' would be written to one file"):
        outputs.for_id(tmp_path, "nuggets_", "AB", ".v3.json", "{}")


def test_hostile_request_ids_each_get_one_bank_inside_out_that_eval_reads(endpoint, tmp_path):
    """`trec/101` used to write banks/nuggets_trec/101.v3.json, which `eval --nuggets banks` cannot read;
    `a/../../../escaped` wrote outside --out, a NUL or a long id stopped the run half-way."""
    requests, lists = _requests_with_ids(tmp_path, HOSTILE_IDS)
    out = tmp_path / "work" / "banks"
    created = api.create_nuggets(requests=requests, docs=DOCS, doc_lists=lists, out=out, max_nuggets=1, cache=None,
                                 **_model(endpoint))
    banks = sorted(p for p in out.iterdir() if not p.name.startswith(".argue-"))
    assert len(banks) == len(HOSTILE_IDS) and all(p.is_file() for p in banks)
    assert len({p.name.lower() for p in banks}) == len(banks)  # apart on a case-insensitive file system too
    assert all(p.resolve().parent == out.resolve() for p in created.written[:-1])
    # nothing outside --out but its two side files
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["banks", "banks.review.jsonl",
                                                                      "banks.summary.json"]
    assert set(read_nugget_banks([out])) == set(HOSTILE_IDS)  # eval's reader
    for path in banks:
        request_id = json.loads(path.read_text(encoding="utf-8"))["query_id"]
        assert request_id.startswith(id_of(path.name.removeprefix("nuggets_").removesuffix(".v3.json")))


# ---------------------------------------------------------------------------------------------------------------
# Side files and --out .

def test_create_into_the_current_folder_writes_its_review_beside_it(endpoint, tmp_path, monkeypatch):
    """`--out .` wrote the banks, then died on `PosixPath('.') has an empty name` without a review file."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", ".",
                                 "--max-nuggets", "2", "--no-cache", "--model", "openai/fake",
                                 "--api-base", endpoint.api_base, "--api-key", "none"])
    assert result.exit_code == 0, result.output
    assert set(read_nugget_banks([work])) == {"ex-101", "ex-102"}
    review = tmp_path / "work.review.jsonl"
    assert review.is_file() and str(review) in result.output.replace("\n", "")
    assert (tmp_path / "work.summary.json").is_file()


def test_create_into_a_folder_holding_its_inputs_is_refused_before_writing(endpoint, tmp_path, monkeypatch):
    """The banks would lie beside the requests and documents, and `eval --nuggets .` read those as banks."""
    shutil.copy(REQUESTS, tmp_path / "requests.jsonl")
    shutil.copy(DOCS, tmp_path / "docs.jsonl")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["nuggets", "create", "--requests", "requests.jsonl", "--docs", "docs.jsonl",
                                 "--out", ".", "--no-cache", "--model", "openai/fake", "--api-base",
                                 endpoint.api_base, "--api-key", "none"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == EXIT_INPUT and len(lines) == 1, result.output
    assert "(an input) is in the bank folder" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "requests.jsonl"]


def test_pool_refuses_to_write_among_banks_given_one_by_one(endpoint, tmp_path):
    """Its candidates and side files would be read as banks by the next `eval --nuggets` of that folder."""
    banks = tmp_path / "banks"
    shutil.copytree(BANKS, banks)
    files = sorted(banks.iterdir())
    docs, reports = _pool_inputs(tmp_path)
    with pytest.raises(InputError, match=r"among the nuggets given one by one from .*banks"):
        api.pool_nuggets(nuggets=files, reports=reports, requests=REQUESTS, docs=docs, out=banks / "cand.jsonl",
                         cache=None, **_model(endpoint))
    assert sorted(banks.iterdir()) == files  # not even a lock file
    assert set(read_nugget_banks([banks])) == {"ex-101", "ex-102"}
    # the same banks given as a folder: refused as before, by the same rule
    with pytest.raises(InputError, match="inside the input folder"):
        api.pool_nuggets(nuggets=banks, reports=reports, requests=REQUESTS, docs=docs, out=banks / "cand.jsonl",
                         cache=None, **_model(endpoint))


def test_pool_never_writes_over_an_input(endpoint, tmp_path):
    docs, reports = _pool_inputs(tmp_path)
    before = reports.read_bytes()
    with pytest.raises(InputError, match=r"reports.jsonl is an input \(reports"):
        api.pool_nuggets(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, out=reports, cache=None,
                         **_model(endpoint))
    assert reports.read_bytes() == before


def test_eval_refuses_an_out_among_reports_given_one_by_one(tmp_path):
    """eval's --out by the same rule: its judgments.jsonl would be read as a report by `eval FOLDER`."""
    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLES / "reports", runs)
    given = [str(p) for p in sorted(runs.iterdir())]
    result = runner.invoke(app, ["eval", *given, "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(runs),
                                 "--model", "openai/fake", "--api-base", "http://127.0.0.1:9", "--api-key", "none",
                                 "--no-cache"])
    assert result.exit_code == EXIT_INPUT, result.output
    assert "given one by one" in result.stderr
    assert sorted(str(p) for p in runs.iterdir()) == given


# ---------------------------------------------------------------------------------------------------------------
# One overwrite rule: only files the command wrote itself, unchanged since

def test_accept_never_overwrites_a_bank_a_person_put_in_out(tmp_path):
    """`pool --accept --out DIR` silently replaced a person's bank already in DIR (not one of its inputs)."""
    out = tmp_path / "extended"
    out.mkdir()
    person = out / "nuggets_ex-101.v3.json"
    text = (BANKS / "nuggets_ex-101.v3.json").read_text().replace("March 2021", "March 2021 (checked by Ana)")
    person.write_text(text)
    with pytest.raises(InputError, match=r"nuggets_ex-101.v3.json .*not written by argue-judge nuggets pool --accept"):
        api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=out)
    assert person.read_text() == text and sorted(p.name for p in out.iterdir()) == ["nuggets_ex-101.v3.json"]
    # under another name it would be read beside the new banks: refused too
    person.rename(out / "ana.json")
    with pytest.raises(InputError, match=r"ana.json is in the bank folder"):
        api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=out)


def test_accept_rerun_is_byte_identical_and_allowed(tmp_path):
    out = tmp_path / "extended"
    api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=out)
    first = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".argue-lock"}
    api.accept_candidates(nuggets=BANKS, candidates=reviewed_candidates(tmp_path), out=out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".argue-lock"} == first


def test_creation_never_overwrites_a_bank_a_person_edited_since(endpoint, tmp_path):
    out = tmp_path / "banks"
    api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, cache=tmp_path / "cache", **_model(endpoint))
    pruned = out / "nuggets_ex-101.v3.json"
    bank = json.loads(pruned.read_text())
    bank["nugget_bank"] = dict(list(bank["nugget_bank"].items())[:1])  # a person prunes the draft
    pruned.write_text(json.dumps(bank))
    with pytest.raises(InputError, match=r"nuggets_ex-101.v3.json was not written by .* or was changed since"):
        api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, cache=tmp_path / "cache", **_model(endpoint))
    assert json.loads(pruned.read_text()) == bank


def test_a_rerun_for_fewer_requests_removes_its_own_stale_banks_only(endpoint, tmp_path):
    out = tmp_path / "banks"
    api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, cache=tmp_path / "cache", **_model(endpoint))
    lists = tmp_path / "lists.jsonl"
    lists.write_text(json.dumps({"request_id": "ex-102", "doc_ids": ["ex-d05", "ex-d06"]}) + "\n")
    api.create_nuggets(requests=REQUESTS, docs=DOCS, doc_lists=lists, out=out, cache=tmp_path / "cache",
                       **_model(endpoint))
    assert set(read_nugget_banks([out])) == {"ex-102"}  # eval reads this run's banks alone


def test_pool_rerun_never_overwrites_a_reviewed_candidates_file(endpoint, tmp_path):
    docs, reports = _pool_inputs(tmp_path)
    out = tmp_path / "pool" / "cand.jsonl"
    kwargs = dict(nuggets=BANKS, reports=reports, requests=REQUESTS, docs=docs, out=out, cache=tmp_path / "cache",
                  **_model(endpoint))
    api.pool_nuggets(**kwargs)
    api.pool_nuggets(**kwargs)  # nobody touched it: the same bytes again
    reviewed = out.read_text().replace('"accept": null', '"accept": true')
    out.write_text(reviewed)
    with pytest.raises(InputError, match=r"cand.jsonl was not written by argue-judge nuggets pool .* changed since"):
        api.pool_nuggets(**kwargs)
    assert out.read_text() == reviewed


def test_runs_killed_while_renaming_leave_a_folder_the_rerun_may_write(endpoint, tmp_path, monkeypatch):
    """The record names old and new bytes while the files are renamed: whichever a kill leaves is the command's."""
    out = tmp_path / "banks"
    cache = tmp_path / "cache"
    api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, max_nuggets=1, cache=cache, **_model(endpoint))
    real_replace, calls = os.replace, []

    def killed(source, target):
        calls.append(target)
        if len(calls) == 3:  # the record, one bank renamed, then the disk goes (as a kill would stop it)
            raise OSError(5, "Input/output error")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", killed)
    for max_nuggets in (3, 2):  # twice in a row: each leaves some files old, some new
        calls.clear()
        with pytest.raises(OutputError):
            api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, max_nuggets=max_nuggets, cache=cache,
                               **_model(endpoint))
    monkeypatch.setattr(os, "replace", real_replace)
    created = api.create_nuggets(requests=REQUESTS, docs=DOCS, out=out, max_nuggets=3, cache=cache,
                                 **_model(endpoint))
    assert read_nugget_banks([out]) == created.banks


def test_export_never_writes_over_the_judgments_it_reads(tmp_path):
    """`export auto-argue j.jsonl --out j.jsonl` replaced the judgments with another format: refused first."""
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("not read: the output is refused before any input is\n")
    result = runner.invoke(app, ["export", "auto-argue", str(judgments), "--nuggets", str(BANKS),
                                 "--out", str(judgments)])
    assert result.exit_code == EXIT_INPUT and "is an input (judgments" in result.output, result.output
    assert judgments.read_text() == "not read: the output is refused before any input is\n"


def test_import_refuses_an_out_inside_the_bank_folder(tmp_path):
    banks = tmp_path / "banks"
    shutil.copytree(BANKS, banks)
    source = tmp_path / "auto-argue.jsonl"
    source.write_text("{}\n")
    result = runner.invoke(app, ["import", "auto-argue", str(source), "--nuggets", str(banks),
                                 "--out", str(banks / "converted")])
    assert result.exit_code == EXIT_INPUT and "inside the input folder" in result.output, result.output
    assert sorted(p.name for p in banks.iterdir()) == ["nuggets_ex-101.v3.json", "nuggets_ex-102.v3.json"]
