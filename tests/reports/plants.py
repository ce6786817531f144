"""Planted bugs in the Markdown summary and the checks that must catch each: `python -m tests.reports.plants [N ...]`
(tests.support.plants runs them)."""
from __future__ import annotations

import sys

from tests.support.plants import Plant, run_plants

TESTS = "tests/reports/test_markdown.py"
RUNS = "tests/reports/test_markdown_runs.py"
PLANTS: list[Plant] = [
    ("markdown: text not escaped (a kernel's message becomes markup)", "reports/markdown.py",
     "    return str(value).translate(_ESCAPED)", "    return str(value)", TESTS),
    ("markdown: a table cell's | not escaped inside code", "reports/markdown.py",
     '        body = body.replace("|", "\\\\|")', "        pass", TESTS),
    ("markdown: code spans always fenced with one backtick", "reports/markdown.py",
     '    fence = "`" * (max(', '    fence = "`" or (max(', TESTS),
    ("text: an unfinished run called by its failures alone", "reports/text.py",
     "    if finished is False:\n        return", "    if False:\n        return", TESTS),
    ("markdown: no cap on the number of lines", "reports/markdown.py",
     "SHOWN_FAILURES = 15", "SHOWN_FAILURES = 400", TESTS),
    ("markdown: the step summary overwritten, not appended", "reports/markdown.py",
     'with path.open("a", encoding="utf-8")', 'with path.open("w", encoding="utf-8")', TESTS),
    ("plugin: no summary written at the end of a run", "reports/plugin.py",
     "(paths[\"markdown\"], summary)):", "):", RUNS),
    ("plugin: the job page's summary never appended", "reports/plugin.py",
     "                  lambda: markdown.append_step_summary(summary))", "                  lambda: None)", RUNS),
    ("compare: the two sides never said to differ", "reports/compare.py",
     "    return [key for key in before if before[key] != after[key]]", "    return []", TESTS),
    ("nightly: the suite inside the night appends to the job summary too", "nightly/steps.py",
     "processes.child_env((markdown.STEP_SUMMARY_VAR,))", "processes.child_env(())",
     "tests/nightly/test_nightly.py"),
    ("placeholders: a stale summary kept at start-up", "reports/placeholders.py",
     "        if path is None:\n            continue", "        if path is None or kind == \"markdown\":\n            continue", RUNS),
    ("diagnosis: an allocation that failed read as the kernel refusing its input", "reports/diagnosis_rules.py",
     "if r.verdict == REFUSED and not _out_of_memory(r)]", "if r.verdict == REFUSED]",
     "tests/reports/test_diagnosis.py"),
    ("diagnosis: out of memory ranked by its weight like the counts' evidence", "reports/diagnosis_base.py",
     "        return replace(item, demoted=self.demoted) if self.demoted else item", "        return item",
     "tests/reports/test_diagnosis.py"),
    ("compare: a failed allocation not said as data", "harness/compare.py",
     "if is_memory_error(_raised(exc))", "if False", "tests/harness/test_compare.py"),
]

if __name__ == "__main__":
    sys.exit(run_plants(PLANTS, sys.argv[1:]))
