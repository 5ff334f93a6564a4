"""Build the benchmark corpus of real text found on this machine into a cache (not in git).

Sources: man pages under /usr/share/man (gzip, roff requests and escapes stripped),
text files under /usr/share/doc (plain or gzip) and /usr/share/common-licenses. Long files
are cut into documents of about ``--words`` words (default 1,100, the size the reference
figures were measured on). Output: ``~/.cache/neardup/corpus.jsonl``, one ``{"source",
"text"}`` object per line, stopping once ``--mb`` megabytes of text are collected.

    python bench/corpus.py --mb 60
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path

CACHE = Path.home() / ".cache" / "neardup"
ROOTS = (Path("/usr/share/man"), Path("/usr/share/doc"), Path("/usr/share/common-licenses"))
_ROFF_ESCAPE = re.compile(r"\\(?:f(?:\[[^\]]*\]|\(..|.)|s[+-]?\d|\(..|\[[^\]]*\]|\*(?:\(..|.)|.)")


def strip_roff(src: str) -> str:
    """Rough roff-to-text: drop requests and comments, keep macro arguments, drop escapes."""
    out = []
    for line in src.splitlines():
        if line.startswith(('.\\"', "'\\\"", '.\\"')):
            continue
        if line.startswith((".", "'")):
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[0][1:] in {
                "SH",
                "SS",
                "B",
                "I",
                "BR",
                "IR",
                "RB",
                "BI",
                "IB",
                "TP",
                "IP",
                "TH",
            }:
                line = parts[1].replace('"', "")
            else:
                continue
        out.append(_ROFF_ESCAPE.sub("", line))
    return "\n".join(out)


def _read(path: Path) -> str | None:
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if b"\0" in raw[:4096]:
        return None  # binary
    text = raw.decode("utf-8", errors="replace")
    return strip_roff(text) if "/man/" in str(path) else text


def documents(words: int) -> Iterator[tuple[str, str]]:
    """(source, text) pairs from every readable file, long files cut into ~words-word parts."""
    for root in ROOTS:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            text = _read(path)
            if not text or not text.strip():
                continue
            tokens = text.split()
            if len(tokens) <= 2 * words:
                yield str(path), " ".join(tokens)
                continue
            for i in range(0, len(tokens), words):
                yield f"{path}#{i // words}", " ".join(tokens[i : i + words])


def build(mb: float, words: int, out: Path) -> tuple[int, int]:
    """Write the corpus; return (documents, bytes of text)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    n = size = 0
    with out.open("w", encoding="utf-8") as f:
        for source, text in documents(words):
            f.write(json.dumps({"source": source, "text": text}, ensure_ascii=False) + "\n")
            n += 1
            size += len(text.encode("utf-8"))
            if size >= mb * 1e6:
                break
    return n, size


def load(path: Path = CACHE / "corpus.jsonl") -> list[str]:
    """The corpus texts, in order; the default corpus is built first when this machine has none."""
    if not path.exists() and path == CACHE / "corpus.jsonl":
        n, size = build(60.0, 1100, path)
        print(f"bench/corpus.py: built {n} documents, {size / 1e6:.1f} MB -> {path}")
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=60.0, help="megabytes of text to collect")
    ap.add_argument("--words", type=int, default=1100, help="words per document for long files")
    ap.add_argument("--out", type=Path, default=CACHE / "corpus.jsonl")
    args = ap.parse_args()
    n, size = build(args.mb, args.words, args.out)
    print(f"{n} documents, {size / 1e6:.1f} MB -> {args.out}")


if __name__ == "__main__":
    main()
