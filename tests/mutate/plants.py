"""Planted bugs in mutate/ and the tests/mutate checks that must catch each: `python -m tests.mutate.plants [N ...]`
(tests.support.plants runs them)."""
from __future__ import annotations

import sys

from tests.support.plants import run_plants

PLANTS = [
    ("classify: a run stopped by a signal/interrupt with a failure on record counts as killed", "mutate/classify.py",
     "        if returncode not in ((1, STOPPED_AT_FIRST_FAILURE) if first_failure else (1,)):",
     "        if False:", "tests/mutate/test_classify.py"),
    ("classify: a build error counts as a kill", "mutate/classify.py",
     "        if _is_build_error(first):", "        if False:", "tests/mutate/test_classify.py"),
    ("classify: our time limit ignored (a stopped run read as its results say)", "mutate/classify.py",
     "    if timed_out:\n        return StageResult(TIMED_OUT", "    if False:\n        return StageResult(TIMED_OUT",
     "tests/mutate/test_classify.py"),
    ("classify: an earlier run's results.json accepted", "mutate/classify.py",
     '    if doc.get("run_id") != run_id:', "    if False:", "tests/mutate/test_classify.py"),
    ("report: not run / timeout counted as survived in the score", "mutate/report.py",
     '    judged = counts.get(KILLED, 0) + counts.get(SURVIVED, 0)\n    return',
     '    judged = counts.get(KILLED, 0) + counts.get(SURVIVED, 0) + counts.get(NOT_RUN, 0) + counts.get(TIMED_OUT, 0)\n    return',
     "tests/mutate/test_report.py"),
    ("report: survivors not listed first", "mutate/report.py",
     "key=lambda e: (STATUSES.index(e[\"status\"]), e[\"location_key\"], e[\"id\"])", "key=lambda e: e[\"id\"]",
     "tests/mutate/test_report.py"),
    ("run: the budget ignored", "mutate/run.py", "self.left() <= 5", "False",
     "tests/mutate/test_runner.py"),
    ("run: no card pinning", "mutate/run.py", "        card = slot % s.cards if s.cards else None", "        card = None",
     "tests/mutate/test_runner.py"),
    ("run: -x not passed", "mutate/suite.py", '        argv.append("-x")', "        pass", "tests/mutate/test_runner.py"),
    ("operators: sum_to_max writes tl.min", "mutate/operators.py", 'yield "sum -> max", ast.Attribute(copy.deepcopy(node.value), "max"',
     'yield "sum -> max", ast.Attribute(copy.deepcopy(node.value), "min"', "tests/mutate/test_operators.py"),
    ("operators: early_return inserted after the statement", "mutate/operators.py", "[ast.Return(None), copy.deepcopy(node)]",
     "[copy.deepcopy(node), ast.Return(None)]", "tests/mutate/test_operators.py"),
    ("generate: ids from the walk index, not the location", "mutate/generate.py",
     'key = f"{file}|{operator}|{line}:{col}-{end[0]}:{end[1]}|{change}"', 'key = f"{file}|{operator}|{change}|{id}"',
     "tests/mutate/test_operators.py"),
    ("generate: non-compiling mutants kept", "mutate/generate.py", '                    compile(mutated, f"{module_name(mid)}.py", "exec")\n',
     "", "tests/mutate/test_operators.py"),
    ("run: an internal error not retried", "mutate/run.py", "                if code == INTERNAL_ERROR and not", "                if False and not",
     "tests/mutate/test_runner.py"),
    ("equivalence: the mutant's line tracer never set", "mutate/equivalence.py", "            sys.settrace(tracer)\n", "            pass\n",
     "tests/mutate/test_equivalence.py"),
    ("equivalence: differences ignored when both return counts", "mutate/equivalence.py",
     '    return ("raised" in a and "raised" in b) or a == b', '    return ("raised" in a and "raised" in b) or ("counts" in a and "counts" in b) or a == b',
     "tests/mutate/test_equivalence.py"),
    ("equivalence: an exception on one side only is the same outcome", "mutate/equivalence.py",
     '    return ("raised" in a and "raised" in b) or a == b', '    return "raised" in a or "raised" in b or a == b',
     "tests/mutate/test_equivalence.py"),
    ("generate: f-strings mutated", "mutate/generate.py", "ast.Lambda, ast.JoinedStr)", "ast.Lambda)",
     "tests/mutate/test_operators.py"),
    ("cli: --select ignored (the weakened suite runs in full)", "mutate/cli.py",
     "stages = selected_suite(args.select) if args.select else full_suite()", "stages = full_suite()",
     "tests/mutate/test_score.py"),
    ("run: crash kills not confirmed against the original", "mutate/run.py",
     "and self.confirm is not None) or self.original_passes(result.nodeid):", "and False) or self.original_passes(result.nodeid):",
     "tests/mutate/test_runner.py"),
]
if __name__ == "__main__":
    sys.exit(run_plants(PLANTS, sys.argv[1:]))
