"""mutation.json and mutation.html: the score counts only judged mutants; survivors first; judgements honest."""
from __future__ import annotations

from typing import Any

from mutate import report


def _entry(mid: str, status: str, line: int = 1, **kw: Any) -> dict[str, Any]:
    return {"id": mid, "operator": "sum_to_max", "location": f"k:{line}:0", "change": "sum -> max", "diff": "-a\n+b",
            "status": status, "why": "", "killer": None, "crash": False, "stage": "fast", "seconds": 1.0,
            "location_key": (line, 0), **kw}


META = {"kernel": "k", "file": "k.py", "device": "cpu", "seconds": 3.0, "budget_s": 60, "jobs": 1,
        "suite": [{"name": "fast", "args": ["-m", "x"]}], "not_compiling": [{"id": "z", "operator": "o",
                                                                            "location": "k:9", "error": "SyntaxError"}],
        "duplicates": 2}


def test_score_counts_killed_survived_and_unreached_only() -> None:
    entries = [_entry("a", "killed", killer={"nodeid": "t::x", "family": "matrix", "verdict": "wrong_counts"}),
               _entry("b", "killed", crash=True, killer={"nodeid": "t::y", "family": "bigoffset", "verdict": "crash",
                                                         "crash": True}),
               _entry("c", "survived", 5), _entry("d", "not_viable"), _entry("e", "not_run"), _entry("f", "timeout"),
               _entry("g", "no_coverage", 6), _entry("h", "equivalent"), _entry("i", "duplicate")]
    doc = report.document(entries, META)
    assert doc["score"] == round(2 / 4, 4) and doc["killed_by_crash"] == 1
    assert doc["counts"] == {"survived": 1, "no_coverage": 1, "killed": 2, "timeout": 1, "not_run": 1,
                             "not_viable": 1, "equivalent": 1, "duplicate": 1}
    assert doc["complete"] is False
    assert report.headline(doc) == ("INCOMPLETE: score 50% of 4 judged (of 9: 1 not viable, 1 equivalent (proved), "
                                    "1 duplicate, 2 not judged)")
    assert doc["mutants"][0]["id"] == "c", "survivors come first"
    assert all("location_key" not in m for m in doc["mutants"])
    assert report.score({"not_run": 3}) is None
    whole = report.document(entries[:4], META)
    assert whole["complete"] is True and report.headline(whole).startswith("score 67% of 3 judged (of 4:")


def test_html_opens_with_the_score_and_lists_survivors_with_diffs() -> None:
    doc = report.document([_entry("a", "killed", killer={"nodeid": "t::x", "family": "matrix", "verdict": "w"}),
                           _entry("c", "survived", judgement="plausibly equivalent (no differing input in 5 trials)"),
                           _entry("e", "not_run")], META)
    page = report.html(doc)
    body = page[page.index("<body>"):]
    assert body.index('id="mut-verdict"') < body.index("mut-survivors")
    assert "MUTATION SCORE 50%" in page and "INCOMPLETE: 1 mutant(s) not judged" in page
    assert "<pre>-a\n+b</pre>" in page and "plausibly equivalent" in page and "SyntaxError" in page


def test_judgements_say_what_the_trials_showed() -> None:
    differs = {"differs": True, "input": "fp16 1x8193", "path": "wrapper", "original": {"counts": [3]},
               "mutant": {"counts": [2]}, "seed": 7, "trial": 4}
    assert report.judgement(differs).startswith("real blind spot: differs on fp16 1x8193")
    assert "seed 7" in report.judgement(differs)
    same = {"differs": False, "trials": 50, "seed": 7, "reached": True}
    assert report.judgement(same) == "plausibly equivalent, not proven (no differing input in 50 trials, seed 7)"
    assert report.judgement({**same, "reached": False}).startswith("not reached on this backend")
    assert report.judgement({"error": "trials stopped after 600 s"}).startswith("not judged")
    assert report.judgement(None).startswith("not judged")


def test_the_page_says_which_ir_compiled_code_proofs_compared() -> None:
    compared = {"level": "ttgir", "target": "device", "kernels": ["k:a", "k:b"], "specs": 12, "off": "",
                "when": "before the cases"}
    doc = report.document([_entry("h", "equivalent")], {**META, "compiled": compared})
    assert report.compiled_line(doc) == ("compiled-code proofs: ttgir compared on the current card, 12 "
                                         "specialization(s) of 2 kernel(s) the suite launches; before the cases")
    assert 'id="mut-compiled">compiled-code proofs: ttgir compared on the current card' in report.html(doc)
    cpu = report.document([], {**META, "compiled": {**compared, "target": "cpu"}})
    assert "ttgir compared for a CUDA sm_90 target, compiled on the CPU" in report.compiled_line(cpu)
    off = report.document([], {**META, "compiled": {**compared, "off": "the original does not compile here: x"}})
    assert report.compiled_line(off) == "compiled-code proofs: none (the original does not compile here: x)"
    assert report.compiled_line(report.document([], META)).startswith("compiled-code proofs: none")
