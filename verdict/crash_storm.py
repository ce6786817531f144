"""A crash storm as data: the group of tests it covers, the crashes that confirmed it, its signature.

A kernel that ends its process on every case of one kind (every bf16 input, say) would cost one xdist worker start
per case. After a few crashes with one signature in one group (harness.isolation), the group's remaining tests are
not run: each such test's record carries the storm (TestRecord.crash_storm) and a NotRun naming it; its verdict is
`not_run`, never a pass, and the crashes that confirmed the storm stay failures. Torch-free.
"""
from __future__ import annotations

from dataclasses import dataclass

from verdict.codec import JsonRecord

GROUP_PROPERTY = "nan_crash_group"  # a test's CrashGroup as JSON, attached at collection (crashes are counted by it)
STORM_PROPERTY = "nan_crash_storm"  # the CrashStorm that left a test unrun, as JSON
RERUN_WITHOUT = "--nan-crash-storm=0"  # the option that runs every test of a storm, each in a worker of its own
SHOWN_GROUPS = 4  # groups a wide storm's reason names (all are in its data)


@dataclass(frozen=True)
class CrashGroup(JsonRecord):
    """Tests that crash alike: one test function, case family, path and dtype ("" where the test has none); a
    wide group (no test, no family) is every test of one dtype through its path or naming none."""

    test: str = ""
    family: str = ""
    path: str = ""
    dtype: str = ""

    def covers(self, other: CrashGroup) -> bool:
        """True when `other` falls in this group: the same group; for a wide one, the same dtype and path, or a test
        that names no path (a contract test calls get_num_nans)."""
        return other == self or (not self.test and other.dtype == self.dtype and other.path in (self.path, ""))

    def wide(self) -> CrashGroup:
        """Every test of this group's path and dtype."""
        return CrashGroup(path=self.path, dtype=self.dtype)

    def describe(self) -> str:
        """'family matrix, bf16, wrapper path'; a wide group: 'every bf16 test, wrapper path or none named'."""
        path = [f"{self.path} path"] if self.path else []
        if not (self.test or self.family):
            return f"every {self.dtype} test, {self.path + ' path or ' if self.path else ''}none named"
        return ", ".join([f"family {self.family}" if self.family else self.test, *([self.dtype] if self.dtype else []),
                          *path])


@dataclass(frozen=True)
class CrashStorm(JsonRecord):
    """Crashes with one signature ('exit status 0', 'signal SIGSEGV', 'timeout', 'device fault') that confirmed a
    storm in `scope` (their node ids, each judged `crash` on its own); `threshold` is --nan-crash-storm. A wide
    storm (every test of one dtype and path) names the groups its crashes hit, the one that stormed first."""

    signature: str
    scope: CrashGroup
    crashes: tuple[str, ...]
    threshold: int
    groups: tuple[CrashGroup, ...] = ()

    def reason(self) -> str:
        """Why a test of the scope was not run, for its NotRun (one text for the whole storm)."""
        named = [g.describe() for g in self.groups[:SHOWN_GROUPS]]
        more = f" and {len(self.groups) - SHOWN_GROUPS} more group(s)" if len(self.groups) > SHOWN_GROUPS else ""
        where = f" in {'; '.join(named)}{more}" if self.groups else ""
        return (f"judged by crash-storm skip after {len(self.crashes)} confirmed crashes with {self.signature}"
                f"{where} (each ended its worker and is a failure)")
