"""The learning sample: which of the input's first pages teach the host models.

``ingest`` and ``learn`` read the input's first ``boilerplate_sample`` pages (the *window*)
and sort each, in the main process, by the host of its raw JSON line (:func:`host_hint`):

* **learn**: a page of a host with fewer than ``host_pages`` pages in the sample so far (by
  default every page of the window has room), or one whose host only the worker's parse can
  tell (an HTML file, a line orjson refuses, one over the size limit). These are the
  learning sample: featurised once, learnt from, and finished when the models are known.
* **final**: a JSON line without a host (no ``url``, or a URL without one). No model can
  apply to it, so ``ingest`` fingerprints and sends it at once, while the sample is learnt.
* **later**: a page of a host that has its ``host_pages`` in the sample already. It is not
  learnt from: it waits for the model like the pages after the window.

The split depends on the input alone (not on timing or the number of workers), so runs over
the same input, resumed or not, learn from the same pages, and ``learn`` learns what
``ingest`` would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from indexer.documents import DEFAULT_TEXT_FIELDS, TextFields
from indexer.sources import RawBatch

__all__ = ["DEFAULT_HOST_PAGES", "DEFAULT_SAMPLE", "Split", "WindowSplit", "host_hint"]

#: Pages read to learn host models: enough for every host with a real share of the input
#: (a host needs ``min_pages`` of them), small next to a bulk load (docs/indexer.md).
DEFAULT_SAMPLE = 10_000
#: Pages of one host learnt from, at most: by default the whole window. A lower cap starts a
#: load of one big host sooner, but that host's model then learns from fewer pages and folds
#: fewer copies (docs/indexer.md, "the learning sample by host").
DEFAULT_HOST_PAGES = DEFAULT_SAMPLE


def host_hint(
    kind: str, data: bytes, max_doc_bytes: int, fields: TextFields = DEFAULT_TEXT_FIELDS
) -> tuple[bool, str | None]:
    """``(True, host)``: the host the worker's parse will give this JSON line (None: none; its
    URL in ``fields``' url field); ``(False, None)``: only that parse can tell."""
    if kind != "jsonl" or len(data) > max_doc_bytes:
        return False, None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False, None
    if not isinstance(doc, dict):
        return False, None
    return True, fields.host_of(doc)


@dataclass(frozen=True, slots=True)
class Split:
    """One batch of the window in its three parts, each in input order."""

    learn: RawBatch
    final: RawBatch
    later: RawBatch


@dataclass
class WindowSplit:
    """Sorts the window's batches, in input order, into :class:`Split` parts."""

    host_pages: int = DEFAULT_HOST_PAGES
    max_doc_bytes: int = 10 * 1024 * 1024
    #: the fields the pages are read with (their url field gives the host)
    fields: TextFields = DEFAULT_TEXT_FIELDS
    #: pages of each host put in the sample so far
    pages: dict[str, int] = field(default_factory=dict)

    def split(self, batch: RawBatch) -> Split:
        parts: tuple[list[int], list[int], list[int]] = ([], [], [])
        for i, (kind, data) in enumerate(zip(batch.kinds, batch.datas, strict=True)):
            known, host = host_hint(kind, data, self.max_doc_bytes, self.fields)
            if not known:
                parts[0].append(i)
            elif host is None:
                parts[1].append(i)
            elif (n := self.pages.get(host, 0)) < self.host_pages:
                self.pages[host] = n + 1
                parts[0].append(i)
            else:
                parts[2].append(i)
        learn, final, later = (batch if len(p) == len(batch) else batch.subset(p) for p in parts)
        return Split(learn, final, later)
