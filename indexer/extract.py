"""HTML to main content with Resiliparse: the article, not the page around it.

Resiliparse's ``main_content`` mode drops navigation, headers, footers, cookie banners,
sidebars and "related" boxes before they can reach a fingerprint. It was chosen over
trafilatura on the measurements in ``docs/indexer.md`` (``bench/extractors.py``): the same
kept article text and no more leaked furniture on our pages, at 10-20x the speed.
"""

from __future__ import annotations

from pydantic import BaseModel
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

__all__ = ["Extracted", "extract"]


class Extracted(BaseModel):
    """Main content of one HTML page: its text, title and canonical URL (when declared)."""

    text: str
    title: str | None = None
    canonical_url: str | None = None


def _canonical(tree: HTMLTree) -> str | None:
    document = tree.document
    if document is None:
        return None
    for link in document.query_selector_all('link[rel="canonical"]'):
        href = link.getattr("href")
        if href:
            return href.strip()
    for meta in document.query_selector_all('meta[property="og:url"]'):
        content = meta.getattr("content")
        if content:
            return content.strip()
    return None


def extract(html: str) -> Extracted:
    """Extract the main content (plain text, paragraphs separated by newlines) of a page."""
    tree = HTMLTree.parse(html)
    text = extract_plain_text(
        tree, main_content=True, alt_texts=False, links=False, list_bullets=False, noscript=False
    )
    title = (tree.title or "").strip() or None
    return Extracted(text=text, title=title, canonical_url=_canonical(tree))
