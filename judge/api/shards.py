"""`merge`: the output folders of sharded `eval` runs combined, as `argue-judge merge` does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judge.api._inputs import PathLike, _check_path, _is_paths

if TYPE_CHECKING:
    from judge.run.merge import Merged


def merge(shards: Sequence[PathLike], *, out: PathLike = "argue-out") -> Merged:
    """The output folders of `eval --shard I/N` runs combined into exactly the files a single run writes, as
    `argue-judge merge` does."""
    from judge.run.merge import merge_outputs

    if isinstance(shards, str | Path) or not _is_paths(shards):
        raise TypeError(f"shards must be a list of output folders (one per shard), not {shards!r:.60}")
    _check_path("out", out, optional=False)
    return merge_outputs([Path(s) for s in shards], Path(out))

