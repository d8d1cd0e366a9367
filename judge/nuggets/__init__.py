"""Nugget banks where there are none, and more answers where there are: creating banks from documents
(`create`), pooling answers from runs' reports (`pool`), with the creation decisions in `decisions/` and eval's
supports_citation / answers_nugget decisions checking every answer. Stands on judging's floor: it asks decisions,
it never scores. The API is judge.nuggets.api (re-exported by judge.api)."""
