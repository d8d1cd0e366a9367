"""Which documents belong to which request (nuggets create --doc-lists): a TREC run (`qid Q0 docid rank score
tag`), TREC qrels (`qid iter docid relevance`, documents judged relevant only) or JSONL
`{"request_id", "doc_ids": [...]}`, into request id -> document ids in file order."""

from __future__ import annotations

import json
from pathlib import Path

from judge.errors import InputError


def read_doc_lists(path: str | Path) -> dict[str, list[str]]:
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the document lists ({exc.strerror or exc})", name) from None
    lists: dict[str, dict[str, None]] = {}
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.lstrip().startswith("{"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON ({exc.msg})", name, line_no) from None
            request_id, doc_ids = row.get("request_id"), row.get("doc_ids")
            if not isinstance(request_id, str | int) or not isinstance(doc_ids, list):
                raise InputError('a JSONL line needs "request_id" and a list "doc_ids"', name, line_no)
            lists.setdefault(str(request_id), {}).update(dict.fromkeys(str(d) for d in doc_ids))
            continue
        fields = line.split()
        if len(fields) == 4:        # qrels: only the documents judged relevant
            try:
                relevant = float(fields[3]) > 0
            except ValueError:
                raise InputError(f"relevance {fields[3]!r} is not a number (qrels: qid iter docid relevance)",
                                 name, line_no) from None
            if relevant:
                lists.setdefault(fields[0], {})[fields[2]] = None
        elif len(fields) == 6:      # a run: every document it retrieved, in file order
            lists.setdefault(fields[0], {})[fields[2]] = None
        else:
            raise InputError(f"{len(fields)} fields; a document list line is a TREC run line (6 fields), a qrels "
                             "line (4) or a JSON object", name, line_no)
    if not lists:
        raise InputError("no document list in this file (it is empty)", name)
    return {request_id: list(ids) for request_id, ids in lists.items()}
