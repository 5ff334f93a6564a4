"""A reader for the few fields of Debian's DEP-11 AppStream YAML this corpus uses.

Only the standard library: top-level ``ID`` and ``Package`` scalars and the ``Name``,
``Summary`` and ``Description`` mappings (language → text); everything else is skipped.
Scalars are folded as YAML 1.1 does (plain, single- and double-quoted, ``>``/``|`` blocks) and
plain ones resolved like PyYAML's safe loader (booleans, numbers, null).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_MAPS = ("Name", "Summary", "Description")
_KEY = re.compile(r"^( *)([^\s:#'\"][^:]*?|'[^']*'|\"[^\"]*\"):(?: +(.*))?$")
_ESC = {
    "0": "\0",
    "a": "\x07",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX = {"x": 2, "u": 4, "U": 8}
_BOOL = {
    "yes": True,
    "Yes": True,
    "YES": True,
    "no": False,
    "No": False,
    "NO": False,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
    "on": True,
    "On": True,
    "ON": True,
    "off": False,
    "Off": False,
    "OFF": False,
}
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?$")


def _resolve(s: str) -> Any:
    """A plain scalar as PyYAML's safe loader types it (the cases DEP-11 text can hit)."""
    if s in ("", "~", "null", "Null", "NULL"):
        return None
    if s in _BOOL:
        return _BOOL[s]
    if _INT.match(s):
        return int(s.replace("_", ""))
    if _FLOAT.match(s):
        return float(s.replace("_", ""))
    return s


def _fold(pieces: list[str]) -> str:
    """Join the lines of a plain scalar: one break is a space, n+1 breaks are n newlines."""
    out = pieces[0].rstrip(" \t")
    blanks = 0
    for ln in pieces[1:]:
        t = ln.strip(" \t")
        if not t:
            blanks += 1
            continue
        out += "\n" * blanks if blanks else " "
        out += t
        blanks = 0
    return out


def _quoted(first: str, rest: Iterator[str], quote: str) -> tuple[str, int]:
    """Scan a quoted scalar from ``first`` (after the opening quote), folding line breaks."""
    out: list[str] = []
    text, consumed = first, 0
    brk, blanks = "", 0  # how the previous line ended ("fold" or "esc") and blank lines since
    while True:
        if brk:
            text = text.lstrip(" \t")
            if not text:
                blanks += 1
                text, consumed = next(rest), consumed + 1
                continue
            out.append("\n" * blanks if blanks or brk == "esc" else " ")
            brk, blanks = "", 0
        spaces: list[str] = []
        i = 0
        escaped_break = False
        while i < len(text):
            c = text[i]
            if c in " \t":
                spaces.append(c)
                i += 1
                continue
            out.extend(spaces)
            spaces = []
            if c == quote:
                if quote == "'" and text[i + 1 : i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), consumed
            if quote == '"' and c == "\\":
                n = text[i + 1 : i + 2]
                if n == "":
                    escaped_break = True
                    break
                if n in _HEX:
                    k = _HEX[n]
                    out.append(chr(int(text[i + 2 : i + 2 + k], 16)))
                    i += 2 + k
                    continue
                out.append(_ESC[n])
                i += 2
                continue
            out.append(c)
            i += 1
        # trailing blanks before a line break are dropped; an escaped break joins the lines
        brk = "esc" if escaped_break else "fold"
        text, consumed = next(rest), consumed + 1


def _block(header: str, lines: list[str], start: int, parent: int) -> tuple[str, int]:
    """A ``>``/``|`` block scalar whose content starts at ``lines[start]``."""
    folded = header[0] == ">"
    chomp = "-" if "-" in header else ("+" if "+" in header else "")
    j = start
    indent = None
    body: list[str] = []
    while j < len(lines):
        ln = lines[j]
        if ln.strip() == "":
            body.append("")
            j += 1
            continue
        ind = len(ln) - len(ln.lstrip(" "))
        if indent is None:
            if ind <= parent:
                break
            indent = ind
        if ind < indent:
            break
        body.append(ln[indent:])
        j += 1
    while body and body[-1] == "":
        body.pop()
        j -= 1
    trailing = 0
    k = j
    while k < len(lines) and lines[k].strip() == "":
        trailing += 1
        k += 1
    chunks: list[str] = []
    n = len(body)
    idx = 0
    breaks: list[str] = []
    line_break = ""
    while idx < n:
        chunks.extend(breaks)
        text = body[idx]
        leading_non_space = text[:1] not in (" ", "\t")
        chunks.append(text)
        line_break = "\n"
        idx += 1
        breaks = []
        while idx < n and body[idx] == "":
            breaks.append("\n")
            idx += 1
        if idx < n:
            if folded and leading_non_space and body[idx][:1] not in (" ", "\t"):
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
    if chomp != "-":
        chunks.append(line_break)
    if chomp == "+":
        chunks.extend(["\n"] * trailing)
    return "".join(chunks), k if chomp == "+" else j


def _value(rest_text: str | None, lines: list[str], j: int, indent: int) -> tuple[Any, int]:
    """The scalar after ``key:`` on line ``j - 1``; returns it and the next line index."""
    if rest_text is None or rest_text == "":
        return None, j
    c = rest_text[0]
    if c in ("'", '"'):
        it = iter(lines[j:])
        val, used = _quoted(rest_text[1:], it, c)
        return val, j + used
    if c in (">", "|"):
        return _block(rest_text, lines, j, indent)
    pieces = [rest_text.rstrip()]
    while j < len(lines):
        ln = lines[j]
        ind = len(ln) - len(ln.lstrip(" "))
        if ln.strip() and ind <= indent:
            break
        if ln.strip().startswith("#"):
            break
        pieces.append(ln)
        j += 1
    while len(pieces) > 1 and not pieces[-1].strip():
        pieces.pop()
    return _resolve(_fold(pieces) if len(pieces) > 1 else pieces[0]), j


def _key(k: str) -> Any:
    if k[:1] in ("'", '"'):
        return k[1:-1]
    return _resolve(k)


def _document(lines: list[str]) -> dict[Any, Any]:
    d: dict[Any, Any] = {}
    j = 0
    while j < len(lines):
        m = _KEY.match(lines[j])
        j += 1
        if not m or m.group(1):
            continue
        key = m.group(2)
        if key in ("ID", "Package"):
            d[key], j = _value(m.group(3), lines, j, 0)
        elif key in _MAPS and not m.group(3):
            sub: dict[Any, Any] = {}
            while j < len(lines):
                sm = _KEY.match(lines[j])
                if not sm or len(sm.group(1)) == 0:
                    if lines[j].strip() and not lines[j].startswith(" "):
                        break
                    j += 1
                    continue
                j += 1
                sub[_key(sm.group(2))], j = _value(sm.group(3), lines, j, len(sm.group(1)))
            d[key] = sub
    return d


def documents(text: str) -> Iterator[dict[Any, Any]]:
    """Each ``---``-separated document of a DEP-11 file, with only the fields above."""
    lines: list[str] = []
    for ln in text.split("\n"):
        if ln == "---" or ln.startswith("--- "):
            if lines:
                yield _document(lines)
            lines = []
        else:
            lines.append(ln)
    if lines:
        yield _document(lines)
