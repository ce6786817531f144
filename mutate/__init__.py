"""`python -m mutate`: how strong the suite is for one kernel module, as a mutation score.

operators (the one table) -> generate (mutants from the module's own source) -> suite (what runs, in stages) ->
run (one pytest per mutant, in parallel, within a budget) -> classify (a status from the run's results.json) ->
equivalence (survivors side by side with the original) -> report (results JSON + HTML) <- cli.
"""
