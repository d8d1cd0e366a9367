"""The decision cache: one interface (`store.DecisionCache`, sealed answers under a key of everything that can change
them) over two backends (`backends`: a local directory or a Redis server), and moving entries between caches
(`transfer`: the `cache export` / `cache import` JSONL)."""
