"""`python -m mutate`: how strong the suite is for one kernel module, as a mutation score (docs/mutate.md).

cli (parse, plan) -> generate (operators on the unit's source, package) -> baseline (the original, coverage) ->
engine (warm workers: pool, warm; compiled proofs: tce; pytest: run, classify) -> survivors -> report, cache.
"""
