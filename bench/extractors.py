"""Compare HTML main-content extractors (trafilatura, resiliparse) on speed and on what they leave.

Two corpora: real pages on this machine (the Rust book/reference mdBook pages: a sidebar
table of contents, menu bar and prev/next navigation around the chapter), and synthetic
news pages whose furniture is known (navigation, cookie banner, "related articles", footer)
around a known article. Prints pages/s and, for the synthetic pages, the share of article
sentences kept and of furniture markers leaked.

    .venv/bin/python bench/extractors.py [--pages 300]
"""

from __future__ import annotations

import argparse
import glob
import random
import time
from collections.abc import Callable
from pathlib import Path

FURNITURE = {
    "nav": "Home News World Business Technology Sport Subscribe Sign in",
    "cookie": "We use cookies to improve your experience. Accept all cookies Manage preferences",
    "related": "Related articles: Ten things you missed this week; Markets rally as rates fall",
    "footer": "Copyright 2026 Example Media Group. All rights reserved. Privacy policy Terms",
}


def synthetic_pages(n: int, seed: int = 1) -> list[tuple[str, list[str]]]:
    """(html, article sentences) pairs with known furniture around a known article."""
    rng = random.Random(seed)
    words = Path("/usr/share/common-licenses/GPL-3").read_text().split()
    pages = []
    for i in range(n):
        sentences = []
        for _ in range(rng.randint(8, 20)):
            start = rng.randrange(len(words) - 30)
            sentences.append(" ".join(words[start : start + rng.randint(12, 25)]) + ".")
        paras = "".join(f"<p>{s}</p>" for s in sentences)
        html = f"""<!doctype html><html><head><title>Story {i}</title></head><body>
<div id="cookie-banner" class="cookie-consent"><p>{FURNITURE["cookie"]}</p></div>
<header><nav><ul>{"".join(f"<li><a href='/{w}'>{w}</a></li>" for w in FURNITURE["nav"].split())}
</ul></nav></header>
<main><article><h1>Story number {i}</h1>{paras}</article>
<aside class="related"><h3>Related articles</h3><ul><li><a href="/a">{FURNITURE["related"]}</a></li>
</ul></aside></main>
<footer><p>{FURNITURE["footer"]}</p></footer></body></html>"""
        pages.append((html, sentences))
    return pages


def _trafilatura() -> Callable[[str], str]:
    import trafilatura

    return lambda html: trafilatura.extract(html, include_comments=False) or ""


def _resiliparse() -> Callable[[str], str]:
    from resiliparse.extract.html2text import extract_plain_text

    return lambda html: extract_plain_text(
        html, main_content=True, alt_texts=False, links=False, list_bullets=False
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=300)
    args = ap.parse_args()
    real_files = sorted(
        glob.glob("/root/.rustup/toolchains/*/share/doc/rust/html/book/*.html")
        + glob.glob("/root/.rustup/toolchains/*/share/doc/rust/html/reference/*.html")
    )[: args.pages]
    real = [Path(f).read_text(encoding="utf-8", errors="replace") for f in real_files]
    synth = synthetic_pages(args.pages)
    print(f"real pages: {len(real)} ({sum(map(len, real)) / 1e6:.1f} MB), synthetic: {len(synth)}")
    for name, make in (("trafilatura", _trafilatura), ("resiliparse", _resiliparse)):
        extract = make()
        t0 = time.perf_counter()
        real_out = [extract(h) for h in real]
        t_real = time.perf_counter() - t0
        t0 = time.perf_counter()
        synth_out = [extract(h) for h, _ in synth]
        t_syn = time.perf_counter() - t0
        kept = sum(s in out for (_, ss), out in zip(synth, synth_out, strict=True) for s in ss)
        total = sum(len(ss) for _, ss in synth)
        leaks = {
            k: sum(v.split(".")[0][:30] in out for out in synth_out) / len(synth_out)
            for k, v in FURNITURE.items()
        }
        toc = sum("Introduction" in out and "Appendix" in out for out in real_out) / len(real)
        empty = sum(not out.strip() for out in real_out) / len(real)
        chars = sum(map(len, real_out)) / max(sum(map(len, real)), 1)
        print(
            f"{name:12s} real {len(real) / t_real:7.0f} pages/s"
            f"  synthetic {len(synth) / t_syn:7.0f} pages/s"
            f" | article kept {kept / total:.1%} | leaked "
            + " ".join(f"{k} {v:.0%}" for k, v in leaks.items())
            + f" | real: sidebar TOC leaked {toc:.0%}, empty {empty:.0%}, text/html {chars:.1%}"
        )


if __name__ == "__main__":
    main()
