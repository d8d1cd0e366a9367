"""Running an evaluation at scale: `evaluate` (load inputs, judge every report, score, write the outputs),
the judgments stream that makes a run resumable (`streaming`), sharding (`shards`) and merging the shards' outputs
(`merge`). The top of the judging stack: imports judging, metrics and formats; only `cli/` and the adapters import
it."""
