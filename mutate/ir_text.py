"""IR text made comparable (mutate.compiled hashes it): source locations, debug metadata, the kernel's and the
module's names, and in MLIR the SSA names (Triton takes them from Python variable names) stripped."""
from __future__ import annotations

import re

# never in IR text (ASCII), so the replacement cannot merge two different texts
_PLACEHOLDER_KERNEL, _PLACEHOLDER_MODULE = "\u00abkernel\u00bb", "\u00abmodule\u00bb"


def normalize(text: str, level: str, kernel_name: str, module: str = "") -> str:
    """IR text without source locations, debug info, the kernel's and module's names (and SSA names in MLIR)."""
    if level in ("ttir", "ttgir"):
        text = _rename_ssa(strip_mlir_locations(text))
    elif level == "llir":
        text = strip_llvm_debug(text)
    else:
        text = strip_ptx_debug(text)
    return _anonymise(text, level, kernel_name, module)


_PAREN_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[()]')
_SSA_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|%[A-Za-z0-9_$.\-]+')


def strip_mlir_locations(text: str) -> str:
    """MLIR without `#locN = ...` definitions and inline `loc(...)` (nested parentheses, quoted file names)."""
    lines = [line for line in text.splitlines() if not re.match(r"\s*#loc\d*\s*=", line)]
    return "\n".join(_drop_loc_calls(line).rstrip() for line in lines)


def _drop_loc_calls(line: str) -> str:
    """One line without its ` loc(...)` references."""
    out, i = [], 0
    while (j := line.find("loc(", i)) >= 0:
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#."):  # part of another identifier
            out.append(line[i:j + 4])
            i = j + 4
            continue
        out.append(line[i:j].rstrip(" "))
        i = _after_parens(line, j + 3)
    out.append(line[i:])
    return "".join(out)


def _after_parens(line: str, start: int) -> int:
    """The index after the parenthesis that closes the one at start (quoted strings skipped)."""
    depth = 0
    for token in _PAREN_TOKENS.finditer(line, start):
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        if depth == 0:
            return token.end()
    return len(line)


def _rename_ssa(text: str) -> str:
    """MLIR SSA values renamed %0, %1, ... by first use, outside strings: Triton names them after variables."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        token = match.group()
        return token if token.startswith('"') else names.setdefault(token, f"%{len(names)}")

    return _SSA_OR_STRING.sub(rename, text)


def strip_llvm_debug(text: str) -> str:
    """LLVM IR without `!dbg` attachments, debug records and debug metadata; metadata renumbered by first use."""
    text = re.sub(r",?\s*!dbg !\d+", "", text)
    keep = [line for line in text.splitlines()
            if not re.match(r"\s*(#dbg_|!llvm\.dbg\.|!\d+ = (distinct )?!DI)", line)
            and "Debug Info Version" not in line]
    numbers: dict[str, str] = {}
    renumbered = re.sub(r"!\d+\b", lambda m: numbers.setdefault(m.group(), f"!{len(numbers)}"), "\n".join(keep))
    return "\n".join(line.rstrip() for line in renumbered.splitlines())


def strip_ptx_debug(text: str) -> str:
    """PTX without comments, `.loc`/`.file` lines, debug labels and `.section .debug_*` blocks."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"^\s*\.section\s+\.debug\w*\s*\{[^}]*\}", "", text, flags=re.M)
    drop = re.compile(r"\s*(\.loc|\.file)\b|\$L__(tmp|func_begin|func_end)\d+:$")
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip() and not drop.match(line))


def _anonymise(text: str, level: str, kernel_name: str, module: str) -> str:
    """The kernel's name and its module's prefix on helpers' mangled names replaced by placeholders.

    Only where they name symbols (after `@` in MLIR and LLVM IR, whole identifiers in PTX), never in strings.
    """
    start = r"(?<![\w$.%])" if level == "ptx" else r"(?:(?<=@)|(?<=@\"))"
    if module:  # NVPTX spells '.' as '_$_'
        prefixes = "|".join(re.escape(m) for m in (module + ".", module.replace(".", "_$_") + "_$_"))
        text = re.sub(f"{start}(?:{prefixes})", _PLACEHOLDER_MODULE + ".", text)
    if kernel_name:
        text = re.sub(f"{start}{re.escape(kernel_name)}(?=_param_\\d|[^\\w$.]|$)", _PLACEHOLDER_KERNEL, text)
    return text
