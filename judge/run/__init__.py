"""Running an evaluation at scale: `inputs` (load and check what a run reads), `evaluate` (judge every report),
`score` (scores from judgments alone, no model client), `outputs` (the output contract: the five files and the
run-summary keys, written once for eval, merge and score), the judgments stream that makes a run resumable
(`streaming`), sharding (`shards`) and merging the shards' outputs (`merge`). The top of the judging stack: imports
judging, metrics and formats; only `cli/` and the adapters import it."""
