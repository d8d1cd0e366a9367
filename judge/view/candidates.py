"""The page of pooled answer candidates beside the banks they would extend (argue-judge nuggets pool)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judge.types import NuggetBank
from judge.view.render import render_page


def candidates_page(banks: Mapping[str, NuggetBank], candidates: list[dict[str, Any]], source: str) -> str:
    """One table per request with candidates: each question with the answers its bank holds and the candidates
    for it. `source`: the candidates file a person edits (named on the page). The command writes it beside the
    candidates, by judge.formats.paths."""
    requests = []
    for request_id in dict.fromkeys(c["request_id"] for c in candidates):
        bank = banks.get(request_id)
        if bank is None:
            continue
        rows = []
        for nugget in bank.nuggets:
            mine = [c for c in candidates if c["request_id"] == request_id and c["nugget_id"] == nugget.nugget_id]
            if mine:
                rows.append({"question": nugget.question, "answers": nugget.answers, "candidates": mine})
        requests.append({"request_id": request_id, "nuggets": rows})
    return render_page("candidates.html.j2", title="Pooled answer candidates", root="", requests=requests,
                       total=len(candidates), source=source)
