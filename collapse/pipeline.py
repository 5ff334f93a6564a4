"""One collapsed search from request to answer: window, grouping, probe, page.

:class:`CollapsedSearch` only decides what to ask Elasticsearch (:class:`SubSearch`) and what
to make of the answers; :func:`run` drives any number of them in lockstep through an
:class:`~collapse.executor.Executor`, so an ``_msearch`` of n searches costs the same number of
round trips as one search: window (with the cursor lookup and ``collapse_total`` alongside),
rarely a refill (from doc values where the index allows: ``collapse.slim``), then ONE probe
``_msearch`` for all representatives of all pages, with the fill of representatives that came
from doc-value refills beside it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from collapse import metrics, paging, probe, result_window, slim
from collapse.credentials import client_credentials
from collapse.errors import Malformed
from collapse.executor import HEADER_PARAMS, Executor, SubResult, SubSearch
from collapse.index_fields import IndexFields
from collapse.params import CollapseParams
from collapse.settings import Settings
from collapse.source import SourcePlan, plan
from indexer.candidates import user_query
from indexer.fingerprints.bits import popcount64
from indexer.grouping import (
    Grouping,
    Prints,
    Thresholds,
    assign,
    group,
    matched_band,
    matched_block,
)
from indexer.hits import (
    FINGERPRINT_FIELD,
    SLIM_KEY,
    VERIFY_SOURCE,
    Decoded,
    decode,
    exact_keys_of,
    probe_keys,
    simhash_and_keys,
)

Hit = dict[str, Any]
DocKey = tuple[str, str]

#: Query-string parameters of ``q`` searches, turned into a ``query_string`` query.
_Q_PARAMS = {
    "df": "default_field",
    "default_operator": "default_operator",
    "analyzer": "analyzer",
    "analyze_wildcard": "analyze_wildcard",
    "lenient": "lenient",
}
#: Parts of a body that only the first window fetch needs.
_FIRST_ONLY = ("aggs", "aggregations", "suggest", "profile")
_TOTAL_SOURCE = VERIFY_SOURCE


def key(hit: Hit) -> DocKey:
    return (str(hit.get("_index")), str(hit.get("_id")))


def refill_step(hits: int, groups: int, wanted: int) -> int:
    """How many more hits to fetch when ``hits`` made ``groups`` groups and ``wanted`` are needed.

    The groups seen so far tell how many hits a group takes here: fetch enough for the missing
    groups at that rate, with a quarter more for luck, at least half again what is held and at
    most four times it. A result list full of copies then fills its page in one or two refills
    (each a round trip) instead of running out of doublings with the page still short.
    """
    if groups <= 0:
        return max(hits, 1)
    needed = -(-hits * wanted * 5 // (groups * 4))  # ceil(hits * wanted / groups * 1.25)
    return max(min(needed - hits, 4 * hits), -(-hits // 2), 1)


def total_of(body: dict[str, Any]) -> tuple[int | None, bool]:
    """``hits.total`` as (value, exact) whichever form Elasticsearch used."""
    total = body.get("hits", {}).get("total")
    if isinstance(total, int):
        return total, True
    if isinstance(total, dict):
        return int(total.get("value", 0)), total.get("relation", "eq") == "eq"
    return None, False


def _int(value: object, name: str) -> int:
    try:
        return int(str(value))
    except ValueError as exc:
        raise Malformed(f"Failed to parse int parameter [{name}] with value [{value}]") from exc


@dataclass
class _Members:
    """Near-duplicates found for one representative on the page."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0


class CollapsedSearch:
    """The state of one collapsed search (see the module docstring for its rounds)."""

    def __init__(
        self,
        settings: Settings,
        ctl: CollapseParams,
        index: str | None,
        body: dict[str, Any],
        query: dict[str, str],
        header: dict[str, Any] | None = None,
    ) -> None:
        self.settings, self.ctl, self.index = settings, ctl, index
        self.t = Thresholds(ctl.max_distance, ctl.min_similarity, settings.collapse_min_tokens)
        self.header = dict(header or {})
        for name in HEADER_PARAMS & query.keys():
            self.header.setdefault(name, query[name])
        if "q" in query:
            qs: dict[str, Any] = {"query": query.pop("q")}
            for name, option in _Q_PARAMS.items():
                if name in query:
                    qs[option] = query.pop(name)
            body["query"] = {"query_string": qs}
        self.start = _int(query.pop("from", body.pop("from", 0)), "from")
        self.size = _int(query.pop("size", body.pop("size", 10)), "size")
        if self.start < 0 or self.size < 0:
            raise Malformed("[from] and [size] must be non-negative")  # ES's own error
        self.source: SourcePlan = plan(body, query)
        self.prior_keys: list[DocKey] = []
        #: ``search_after`` without our cursor: the earlier groups are rebuilt from the top
        #: of the ranking down to the hit it names (``collapse.paging``).
        self.rebuild = False
        if isinstance(body.get("search_after"), list):
            body["search_after"], self.prior_keys = paging.split_search_after(body["search_after"])
            self.rebuild = not self.prior_keys and paging.remembers(body)
        self.body = body
        #: A point in time replaces the index: internal searches must carry it too.
        self.pit = body.get("pit") if isinstance(body.get("pit"), dict) else None
        #: ``index.max_result_window`` when known (``collapse.result_window``): no fetch beyond.
        self.es_limit = None if self.pit is not None else result_window.limit_of(index)
        self._redo = False  # round 1 is sent again, sized within a limit just learnt
        self._size_window()
        self.first: SubResult | None = None
        self.failed: SubResult | None = None
        self.hits: list[Hit] = []
        self.prior_hits: list[Hit] = []
        self.total_result: SubResult | None = None
        self.fetches = 0
        self._last_step = 0  # hits asked for by the latest refill
        self.exhausted = False  # no further window fetch
        self.complete = False  # ... because Elasticsearch has no more hits
        self.took = 0
        self.collapse_ns = 0
        self.grouping: Grouping | None = None
        self.decoded: Decoded | None = None
        self.n_prior = 0
        self._grouped = 0  # hits of the window grouped so far
        self.collapsed: list[int] = []  # window indices of representatives, in rank order
        self.page: list[int] = []
        self.found: dict[int, _Members] = {}
        self.degraded: list[str] = []
        self.probe_truncated = False  # more candidates than fetched: folded is a lower bound
        self.probed = 0  # candidates the probe brought (verified or not)
        #: Refills from doc values (``collapse.slim``); ``query`` is now what goes to ES.
        self.slim_refills = settings.collapse_doc_values and slim.eligible(body, query)
        self.probe_read = "full"  # how the probe reads its candidates (``collapse.slim``)
        self.probe_again = False  # a doc-value probe was refused: send it again in full
        self.total_read = "full"  # how collapse_total's search reads its hits
        self.total_again = False  # ... refused from doc values: send it again in full

    # -- round 1 and refills: the window -------------------------------------------------

    def _size_window(self) -> None:
        limit = self.settings.collapse_max_window
        self.max_window = limit if self.es_limit is None else min(limit, self.es_limit)
        self.target = paging.window_size(
            self.start,
            self.size,
            factor=self.settings.collapse_window_factor,
            min_window=self.settings.collapse_min_window,
            max_window=self.max_window,
            override=self.ctl.window,
        )

    def _cap(self, size: int) -> int:
        """A fetch size within the index's result window."""
        return size if self.es_limit is None else min(size, self.es_limit)

    def _window_refused(self, result: SubResult) -> bool:
        """Whether Elasticsearch refused a fetch for a result window larger than the index
        allows and that limit is news: every later fetch is then sized within it."""
        if result.ok:
            return False
        limit = result_window.learn(self.index, result, remember=self.pit is None)
        if limit is None or (self.es_limit is not None and limit >= self.es_limit):
            return False
        self.es_limit = limit
        self._size_window()
        return True

    def _check_search(self) -> SubSearch:
        """The request's own ``from + size`` beyond the proxy's window: a search that fetches
        nothing, for Elasticsearch's refusal when that is beyond the index's result window."""
        body = {k: v for k, v in self.body.items() if k not in _FIRST_ONLY}
        body.update({"from": self.start + self.size, "size": 0, "track_total_hits": False})
        return SubSearch(self.index, body, self.header, True)

    def _window_body(self) -> dict[str, Any]:
        body = dict(self.body)
        if self.source.send is not None:
            body["_source"] = self.source.send
        if self.fetches == 0:
            body["from"] = 0
            body["size"] = self.target
            return body
        for name in _FIRST_ONLY:
            body.pop(name, None)
        body["track_total_hits"] = False
        body["size"] = self._last_step
        if "search_after" in self.body and isinstance(self.hits[-1].get("sort"), list):
            body["search_after"] = self.hits[-1]["sort"]
            body.pop("from", None)
        else:
            body["from"] = len(self.hits)
        return body

    def requests(self) -> list[tuple[str, SubSearch]]:
        """What to fetch next (empty: the window is complete)."""
        if self.failed is not None:
            return []
        if self.fetches == 0:
            # The cursor lookup comes first: its answer must be in before the window is grouped.
            out = [("prior", self._prior_search())] if self.prior_keys else []
            if self.rebuild:
                out.append(("prefix", self._prefix_search()))
            out.append(("window", SubSearch(self.index, self._window_body(), self.header, True)))
            if self.ctl.total:
                self.total_again = False
                out.append(("total", self._total_search()))
            if self.start + self.size > self.max_window and "search_after" not in self.body:
                out.append(("check", self._check_search()))
            return out
        out = []
        if self.total_again:  # its doc-value read was refused: once more, in full
            self.total_again = False
            out.append(("total", self._total_search()))
        if self._needs_more():
            body = self._window_body()
            if self.slim_refills and not slim.refused(self.index):
                out.append(
                    ("slim", SubSearch(self.index, slim.refill_body(body), self.header, True))
                )
            else:
                out.append(("window", SubSearch(self.index, body, self.header, True)))
        return out

    def _prior_search(self) -> SubSearch:
        keys = (
            self.prior_keys[-self.settings.collapse_cursor_reps :]
            if (self.settings.collapse_cursor_reps)
            else []
        )
        self.prior_keys = keys
        should = [q for q in probe.exclude_seen(keys)]
        body = {
            "query": {"bool": {"should": should, "minimum_should_match": 1}},
            "size": self._cap(max(len(keys), 1)),
            "_source": [FINGERPRINT_FIELD],
        }
        return self._internal(body)

    def _prefix_search(self) -> SubSearch:
        """The ranking from its top, fingerprints only: the hits before ``search_after``."""
        body = {k: v for k, v in self.body.items() if k in paging.RANKING_KEYS}
        body.update(
            {
                "size": self.max_window,
                "_source": VERIFY_SOURCE,
                "track_total_hits": False,
            }
        )
        return SubSearch(self.index, body, self.header, True)

    def _total_search(self) -> SubSearch:
        body: dict[str, Any] = {
            "size": self._cap(self.settings.collapse_total_limit),
            "_source": _TOTAL_SOURCE,
            "track_total_hits": True,
        }
        # What selects the hits travels as it is (a kNN search or a retriever included: a
        # match_all beside them would add every document).
        for name in ("query", "knn", "retriever", "post_filter", "sort", "search_after"):
            if name in self.body:
                body[name] = self.body[name]
        if not any(body.get(name) for name in ("query", "knn", "retriever")):
            body["query"] = {"match_all": {}}
        self.total_read = "full"
        if self.settings.collapse_doc_values and not slim.refused(self.index):
            body = slim.total_body(body)
            self.total_read = "doc_values"
        return self._internal(body)

    def _internal(self, body: dict[str, Any]) -> SubSearch:
        """One of the proxy's own searches, on the request's indices or point in time."""
        if self.pit is not None:
            return SubSearch(None, {**body, "pit": self.pit}, self._internal_header())
        return SubSearch(self.index, body, self._internal_header())

    def _internal_header(self) -> dict[str, Any]:
        return {k: v for k, v in self.header.items() if k in HEADER_PARAMS}

    def accept(self, kind: str, result: SubResult) -> None:
        """Take one answer of :meth:`requests`."""
        if kind == "check":
            if not result.ok:
                self.failed = result  # Elasticsearch's refusal of the request's own from + size
            return
        if kind == "prefix":
            if self._window_refused(result):
                self._redo = True
            elif result.ok and result.body:
                self.prior_hits = paging.hits_before(
                    result.body.get("hits", {}).get("hits", []), self.body["search_after"]
                )
            else:
                self.degraded.append("rebuilding the earlier pages' groups failed")
            return
        if kind == "prior":
            if self._window_refused(result):
                self._redo = True  # the window of this round is ignored: round 1 again
                return
            if result.ok and result.body:
                found = {key(h): h for h in result.body.get("hits", {}).get("hits", [])}
                self.prior_hits = [found[k] for k in self.prior_keys if k in found]
            else:
                self.degraded.append("cursor lookup failed")
            return
        if kind == "total":
            if result_window.learn(self.index, result, remember=False) is not None:
                if self._window_refused(result) and self.fetches:
                    self.total_again = True  # sent again, within the limit
                elif not self.fetches:
                    return  # round 1 is sent again
                self.total_result = result
                return
            if self.total_read == "doc_values":
                if not self._read_doc_values("total", [result], identified=False):
                    self.total_again = True  # requests() sends it again in full
                    return
            else:
                metrics.HIT_READS.labels("total", "full").inc()
            self.total_result = result
            return
        if kind == "slim":
            if not self._read_doc_values("refill", [result]):
                self.slim_refills = False  # requests() asks for the same refill, in full
                return
        elif self.fetches:
            metrics.HIT_READS.labels("refill", "full").inc()
        if self.first is None and (self._redo or self._window_refused(result)):
            self._redo = False  # round 1 again, every fetch within the limit just learnt
            self.degraded.clear()
            return
        self.fetches += 1
        if not result.ok or result.body is None:
            if self.first is None:
                self.failed = result
            else:
                self.degraded.append("refill failed")
                self.exhausted = True
            return
        if self.first is None:
            self.first = result
        self.took += int(result.body.get("took", 0))
        got = result.body.get("hits", {}).get("hits", [])
        asked = self._asked
        self.hits.extend(got)
        if len(got) < asked:
            self.exhausted = self.complete = True
        total, exact = total_of(self.first.body) if self.first.body else (None, False)
        if (
            exact
            and total is not None
            and total <= len(self.hits)
            and "search_after" not in self.body
        ):
            # hits.total counts every match: nothing lies beyond the window, no probe needed.
            self.exhausted = self.complete = True
        self._group()

    def _read_doc_values(
        self, search: str, results: list[SubResult], identified: bool = True
    ) -> bool:
        """Put readable hits in place of the doc-value answers of one ``search`` (refill,
        probe, total); False when one cannot stand for a full read (``collapse.slim``): the
        index expression is then read in full for a while, and the caller asks again."""
        read = [
            slim.hits_of(r.body, identified) if r.ok and r.body is not None else None
            for r in results
        ]
        if any(hits is None for hits in read):
            metrics.HIT_READS.labels(search, "refused").inc()
            slim.refuse(self.index)
            return False
        for result, hits in zip(results, read, strict=True):
            assert result.body is not None and hits is not None
            result.body.setdefault("hits", {})["hits"] = hits
        metrics.HIT_READS.labels(search, "doc_values").inc()
        return True

    @property
    def _asked(self) -> int:
        if self.fetches <= 1:
            return self.target
        return self._last_step

    def _needs_more(self) -> bool:
        groups = len(self.collapsed)
        if self.exhausted or groups >= self.start + self.size:
            return False
        if self.fetches > self.settings.collapse_refills:
            return False
        if len(self.hits) >= self.max_window:
            return False
        total, _ = total_of(self.first.body) if self.first and self.first.body else (None, False)
        if total is not None and len(self.hits) >= total:
            return False
        self._last_step = min(
            refill_step(len(self.hits), groups, self.start + self.size),
            self.max_window - len(self.hits),
        )
        return self._last_step > 0

    # -- grouping ---------------------------------------------------------------------------

    def _group(self) -> None:
        """Group the window. After a refill only the new hits are decoded and grouped: grouping
        is prefix-stable, so the groups of the hits held stay as they are (and the fingerprint
        version is the one the first fetch decoded)."""
        t0 = time.perf_counter_ns()
        held = self.decoded
        if held is not None and held.params is not None and self.grouping is not None:
            new = decode(
                self.hits[self._grouped :], self.settings.collapse_min_tokens, held.params.version
            )
            self.decoded = Decoded(Prints.concat([held.prints, new.prints]), held.params)
            self.grouping = group(self.decoded.prints, self.t, settled=self.grouping)
        else:
            decoded = decode(self.hits, self.settings.collapse_min_tokens)
            version = decoded.params.version if decoded.params else None
            self.n_prior = len(self.prior_hits)
            prints = decoded.prints
            if self.prior_hits:
                prior = decode(self.prior_hits, self.settings.collapse_min_tokens, version)
                if decoded.params is None and prior.params is not None:
                    # No fingerprint in the window (an empty last page): the earlier pages'
                    # version gives its rows their shape.
                    decoded = decode(
                        self.hits, self.settings.collapse_min_tokens, prior.params.version
                    )
                    prints = decoded.prints
                prints = Prints.concat([prior.prints, prints])
            self.decoded = Decoded(prints, decoded.params)
            self.grouping = group(prints, self.t)
        self._grouped = len(self.hits)
        reps = self.grouping.representatives
        self.collapsed = [int(r) - self.n_prior for r in reps if r >= self.n_prior]
        if self.rebuild and not self.prior_keys:  # the rebuilt earlier groups, for the cursor
            self.prior_keys = [key(self.prior_hits[int(r)]) for r in reps if r < self.n_prior]
        self.collapse_ns += time.perf_counter_ns() - t0

    # -- the probe beyond the window --------------------------------------------------------

    def probe_requests(self, probes: frozenset[str]) -> list[SubSearch]:
        """The page's probe: one candidate search for all its representatives, by their keys
        of the schemes ``probes`` (``indexer.hits``) and their exact keys."""
        if self.failed is not None or self.grouping is None or self.decoded is None:
            return []
        self.page = self.collapsed[self.start : self.start + self.size]
        params = self.decoded.params
        if not self.settings.collapse_probe_size or params is None:
            return []
        if self.complete:  # the window holds every hit: nothing lies beyond it
            return []
        if not probe.probe_can_match(self.body):
            # The hits come from a kNN search or a retriever, which a filtered query cannot
            # reproduce: copies beyond the window stay uncounted, and the count says so.
            self.probe_truncated = True
            return []
        terms: list[list[tuple[str, str]]] = []
        prints = self.decoded.prints
        fingerprinted = [w for w in self.page if prints.present[w + self.n_prior]]
        keys = exact_keys_of([self.hits[w] for w in fingerprinted], params)
        for w in fingerprinted:
            row = w + self.n_prior
            # A short document groups by exact key only: its other keys would only bring
            # candidates that cannot verify.
            if prints.token_count[row] >= self.t.min_tokens:
                simhash = int(prints.simhash[row])
                terms.append(probe_keys(simhash, prints.minhash[row], params, probes))
        if not any(terms) and not any(keys):
            return []
        seen = self.prior_keys + [key(h) for h in self.hits]
        size = self._cap(self.settings.collapse_probe_size)
        body = probe.probe_body(self.body, terms, keys, seen, size)
        self.probe_read = "full"
        if self.settings.collapse_doc_values and not slim.refused(self.index):
            body = slim.probe_body(body)
            self.probe_read = "doc_values"
        return [self._internal(body)]

    # -- the fill: representatives read from doc values, fetched in full ---------------------

    def fill_requests(self) -> list[SubSearch]:
        """The page's representatives that came from a slim refill (``collapse.slim``), fetched
        in full by id with the user's own request: same ``_score``, ``sort``, ``_source``
        filtering, highlighting and fields as in a full refill. After :meth:`probe_requests`
        (which sets the page)."""
        keys = [key(self.hits[w]) for w in self.page if SLIM_KEY in self.hits[w]]
        if not keys:
            return []
        body = dict(self.body)
        if self.source.send is not None:
            body["_source"] = self.source.send
        for name in (*_FIRST_ONLY, "from", "search_after"):
            body.pop(name, None)
        body["size"] = len(keys)
        body["track_total_hits"] = False
        these = {"bool": {"should": probe.exclude_seen(keys), "minimum_should_match": 1}}
        body["query"] = {"bool": {"must": [user_query(self.body)], "filter": [these]}}
        return [SubSearch(self.index, body, self.header, True)]

    def accept_fill(self, results: list[SubResult]) -> None:
        """Put the full hits in place of the page's slim representatives."""
        full: dict[DocKey, Hit] = {}
        for result in results:
            if result.ok and result.body is not None:
                full.update((key(h), h) for h in result.body.get("hits", {}).get("hits", []))
        for w in self.page:
            hit = self.hits[w]
            if SLIM_KEY not in hit:
                continue
            got = full.get(key(hit))
            if got is None:  # gone since the refill, or the fill failed: shown without _source
                hit.pop(SLIM_KEY)
                self.degraded.append("fill failed: a representative could not be fetched")
            else:
                self.hits[w] = got

    def accept_probes(self, results: list[SubResult]) -> None:
        """Verify the candidates and credit each to the best-ranked representative it matches."""
        t0 = time.perf_counter_ns()
        assert self.grouping is not None and self.decoded is not None
        if self.probe_read == "doc_values" and results:
            if not self._read_doc_values("probe", results):
                self.probe_again = True  # sent again in full (:func:`run`)
                return
        elif results:
            metrics.HIT_READS.labels("probe", "full").inc()
        self.probe_again = False
        cands: dict[DocKey, Hit] = {}
        for result in results:
            if not result.ok or result.body is None:
                self.degraded.append("probe failed")
                continue
            fetched = result.body.get("hits", {}).get("hits", [])
            total, exact = total_of(result.body)
            if result.body.get("timed_out"):
                self.probe_truncated = True
            if not exact or (total is not None and total > len(fetched)):
                self.probe_truncated = True
            for h in fetched:
                cands.setdefault(key(h), h)
        hits = list(cands.values())
        self.probed += len(hits)
        if not hits or not self.page:
            self.collapse_ns += time.perf_counter_ns() - t0
            return
        version = self.decoded.params.version if self.decoded.params else None
        # A candidate counts for the best-ranked representative it verifies against: ones
        # ranked below the page's last cannot change where a page's candidate goes.
        reps = self.grouping.representatives
        reps = reps[reps <= self.page[-1] + self.n_prior]
        rep_prints = self.decoded.prints.take(reps)
        got: Decoded | None = None
        if all(SLIM_KEY in h for h in hits):
            # Read from doc values: all decode in one call (verification tests them all at once).
            got = decode(hits, self.settings.collapse_min_tokens, version)
        else:
            # Only candidates within max_distance of a representative, or sharing an exact key
            # with one, can verify: decode the MinHash of those alone (most share a band by
            # chance).
            simhash, keys = simhash_and_keys(hits)
            maybe = self._may_verify(simhash, keys, rep_prints).tolist()
            hits = [h for h, m in zip(hits, maybe, strict=True) if m]
            got = decode(hits, self.settings.collapse_min_tokens, version) if hits else None
        if hits and got is not None:
            best, ham, sim = (a.tolist() for a in assign(got.prints, rep_prints, self.t))
            on_page = {w + self.n_prior for w in self.page}
            rep_rows = reps.tolist()
            for c, b in enumerate(best):
                if b < 0 or rep_rows[b] not in on_page:
                    continue
                w = rep_rows[b] - self.n_prior
                found = self.found.setdefault(w, _Members())
                found.count += 1
                found.entries.append(
                    self._member(hits[c], ham[c], sim[c], rep_rows[b], got, c, "probe")
                )
        self.collapse_ns += time.perf_counter_ns() - t0

    def _may_verify(self, simhash: np.ndarray, keys: np.ndarray, reps: Prints) -> np.ndarray:
        """(n,) bool: within ``max_distance`` of a representative, or sharing its exact key."""
        near = popcount64(simhash[:, None] ^ reps.simhash[None, :]) <= self.t.max_distance
        rep_keys = reps.key[reps.key >= 0]
        if len(keys) * len(rep_keys) <= 1 << 16:  # a page's worth: a table beats isin's sort
            return near.any(axis=1) | (keys[:, None] == rep_keys[None, :]).any(axis=1)
        return near.any(axis=1) | np.isin(keys, rep_keys)

    def _member(
        self, hit: Hit, ham: int, sim: float, rep: int, prints: Decoded, row: int, found: str
    ) -> dict[str, Any]:
        """One entry of ``_collapse.members`` (``rep``, ``row``: indices into the grouping and
        into ``prints``, for the explain fields)."""
        entry: dict[str, Any] = {
            "_id": hit.get("_id"),
            "_index": hit.get("_index"),
            "_score": hit.get("_score"),
            "hamming": ham,
            "similarity": round(sim, 4),
        }
        if self.ctl.explain and self.decoded is not None:
            blocks = self.decoded.params.blocks if self.decoded.params else 0
            entry["block"] = (
                matched_block(
                    int(prints.prints.simhash[row]), int(self.decoded.prints.simhash[rep]), blocks
                )
                if blocks
                else None
            )
            entry["band"] = matched_band(
                prints.prints.minhash[row], self.decoded.prints.minhash[rep]
            )
            entry["found"] = found
        return entry

    # -- the answer ---------------------------------------------------------------------------

    def members(
        self, w: int, limit: int | None = None, behind: dict[int, list[int]] | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """The entries of the first ``limit`` near-duplicates folded behind the representative
        at window position ``w`` (the window's, then the probe's: rank order), and how many
        there are. ``_collapse`` and the expander both read this, so they cannot disagree.
        ``behind``: every representative's window members, when the caller has them."""
        g, dec = self.grouping, self.decoded
        assert g is not None and dec is not None
        gi = w + self.n_prior
        in_window = behind.get(gi, []) if behind is not None else g.members(gi).tolist()
        beyond = self.found.get(w, _Members())
        count = len(in_window) + beyond.count
        limit = count if limit is None else limit
        listed = [  # entries only for what is listed: a group may fold hundreds
            self._member(
                self.hits[m - self.n_prior],
                int(g.hamming[m]),
                float(g.similarity[m]),
                gi,
                dec,
                m,
                "window",
            )
            for m in in_window[:limit]
        ]
        return (listed + beyond.entries)[:limit], count

    def render(self) -> tuple[int, dict[str, Any] | None, SubResult | None]:
        """(status, body) of the collapsed answer, or the failed result to pass on as is."""
        if self.failed is not None or self.first is None or self.first.body is None:
            return (self.failed or self.first or SubResult(500, None)).status, None, self.failed
        t0 = time.perf_counter_ns()
        g, dec = self.grouping, self.decoded
        assert g is not None and dec is not None
        out = self.first.body
        page_hits = []
        folded_total = 0
        with_cursor = paging.carries_cursor(self.body)
        shown: list[DocKey] = list(self.prior_keys)
        rep_keys = [key(self.hits[w]) for w in self.collapsed]
        folded_behind: dict[int, list[int]] = {}  # representative -> its members, in rank order
        for m, r in enumerate(g.rep.tolist()):
            if m != r:
                folded_behind.setdefault(r, []).append(m)
        for pos, w in enumerate(self.collapsed[: self.start + self.size]):
            if pos < self.start:
                continue
            hit = self.hits[w]
            listed, folded = self.members(w, self.ctl.members, folded_behind)
            folded_total += folded
            self.source.strip(hit)
            hit["_collapse"] = {"folded": folded, "members": listed}
            if with_cursor and isinstance(hit.get("sort"), list):
                cap = max(self.settings.collapse_cursor_reps, 1)
                carried = (shown + rep_keys[: pos + 1])[-cap:]
                hit["sort"] = [*hit["sort"], paging.encode_cursor(carried)]
            page_hits.append(hit)
        without = int((~dec.prints.present[self.n_prior :]).sum())
        out.setdefault("hits", {})["hits"] = page_hits
        out["took"] = self.took
        info: dict[str, Any] = {
            "enabled": True,
            "max_distance": self.t.max_distance,
            "min_similarity": self.t.min_similarity,
            "window": len(self.hits),
            "groups": len(page_hits),
            "folded": folded_total,
            "folded_relation": "gte" if self.probe_truncated or self.degraded else "eq",
            "without_fingerprint": without,
        }
        if self.ctl.total:
            info.update(self._total_groups())
        self.collapse_ns += time.perf_counter_ns() - t0
        info["took_ms"] = round(self.collapse_ns / 1e6, 3)
        info["degraded"] = bool(self.degraded)
        if self.degraded:
            info["reason"] = "; ".join(sorted(set(self.degraded)))
        out["collapse"] = info
        metrics.record_collapse(
            groups=len(page_hits),
            folded=folded_total,
            group_sizes=[1 + h["_collapse"]["folded"] for h in page_hits],
            without_fingerprint=without,
            degraded_reason=info.get("reason"),
        )
        return self.first.status, out, None

    def _total_groups(self) -> dict[str, Any]:
        """Distinct groups among all hits (exact up to ``collapse_total_limit`` hits)."""
        r = self.total_result
        if r is None or not r.ok or r.body is None:
            self.degraded.append("collapse_total failed")
            return {}
        hits = r.body.get("hits", {}).get("hits", [])
        total, exact = total_of(r.body)
        version = self.decoded.params.version if self.decoded and self.decoded.params else None
        dec = decode(hits, self.settings.collapse_min_tokens, version)
        groups = int(np.count_nonzero(group(dec.prints, self.t).is_rep))
        complete = exact and total is not None and total <= len(hits)
        return {"total_groups": groups, "total_groups_relation": "eq" if complete else "gte"}


async def run(
    searches: list[CollapsedSearch],
    executor: Executor,
    budget_ms: float | None,
    index_meta: IndexFields,
) -> None:
    """Drive the searches through their rounds, batching each round across searches; the
    probe sends the keys of the schemes the searched indices record (``index_meta``).

    Past ``budget_ms`` (``collapse_time_budget_ms``) no refill starts and the probe is abandoned:
    the answer is then collapsed within the window only and marked ``degraded``.
    """
    started = time.perf_counter()

    def left() -> float:
        if budget_ms is None:
            return float("inf")
        return budget_ms / 1000 - (time.perf_counter() - started)

    # The probe schemes of the indices searched are read (or found cached) while the window is
    # fetched: no round trip of their own before the probe.
    indices = list({s.index for s in searches})
    credentials = client_credentials(executor.json_headers)
    reading = asyncio.gather(*(index_meta.probes(i, credentials) for i in indices))
    try:
        first = True
        while True:
            if not first and left() <= 0:
                for s in searches:
                    if s.requests():
                        s.exhausted = True
                        s.degraded.append(
                            f"time_budget: the window took longer than {budget_ms} ms"
                        )
                break
            round_ = [(s, kind, sub) for s in searches for kind, sub in s.requests()]
            if not round_:
                break
            first = False
            results = await executor.run([sub for _, _, sub in round_])
            for (s, kind, _), result in zip(round_, results, strict=True):
                s.accept(kind, result)
        schemes = dict(zip(indices, await reading, strict=True))
    finally:
        reading.cancel()  # a window that failed: the read is not waited for
    probes = [(s, sub) for s in searches for sub in s.probe_requests(schemes[s.index])]
    fills = [(s, sub) for s in searches for sub in s.fill_requests()]

    async def probe_round(
        pairs: list[tuple[CollapsedSearch, SubSearch]], riders: list[SubSearch] | None = None
    ) -> list[SubResult]:
        """One probe (a plain _search) travels as a _search, several as one _msearch, with the
        ``riders`` (the fill: :meth:`Executor.run_probes`) after them."""
        if not pairs:
            return []
        if budget_ms is not None:
            # Elasticsearch stops the probe itself when the budget is spent (partial: timed_out).
            remaining = f"{max(int(left() * 1000), 1)}ms"
            for _, sub in pairs:
                sub.body["timeout"] = remaining
        # In this task (asyncio.timeout, not wait_for's extra task): the probe leaves at once.
        async with asyncio.timeout(max(left(), 0.001)):
            return await executor.run_probes([sub for _, sub in pairs], riders)

    def accept(
        pairs: list[tuple[CollapsedSearch, SubSearch]], got: object, among: list[CollapsedSearch]
    ) -> None:
        """Hand each search of ``among`` its probe answers (none when the round timed out)."""
        if isinstance(got, TimeoutError):
            for s, _ in pairs:
                s.degraded.append(f"time_budget: the probe took longer than {budget_ms} ms")
            got = []
        elif isinstance(got, BaseException):
            raise got
        assert isinstance(got, list)
        by_search: dict[int, list[SubResult]] = {}
        for (s, _), result in zip(pairs if got else [], got, strict=True):
            by_search.setdefault(id(s), []).append(result)
        for s in among:
            if s.failed is None and s.grouping is not None:
                s.accept_probes(by_search.get(id(s), []))

    # The fill travels beside the probe (in its _msearch when it may), and is never abandoned:
    # the page needs its hits. Past the budget the probe is given up and the fill sent alone.
    fill_subs = [sub for _, sub in fills]
    got: list[Any] | tuple[Any, ...]
    if probes and fills and executor.may_share:
        try:
            answers = await probe_round(probes, fill_subs)
            got = [answers[: len(probes)], answers[len(probes) :]]
        except TimeoutError as exc:
            got = [exc, await executor.run(fill_subs)]
    else:
        got = await asyncio.gather(
            probe_round(probes), executor.run(fill_subs), return_exceptions=True
        )
    if isinstance(got[1], BaseException):
        raise got[1]
    assert isinstance(got[1], list)
    fill_results: dict[int, list[SubResult]] = {}
    for (s, _), result in zip(fills, got[1], strict=True):
        fill_results.setdefault(id(s), []).append(result)
    for s in searches:
        if s.failed is None and s.grouping is not None:
            s.accept_fill(fill_results.get(id(s), []))
    accept(probes, got[0], searches)
    # A probe read from doc values that could not be (an older index): once more, in full.
    refused = [s for s in searches if s.probe_again]
    if refused:
        again = [(s, sub) for s in refused for sub in s.probe_requests(schemes[s.index])]
        try:
            redone: object = await probe_round(again)
        except TimeoutError as exc:
            redone = exc
        accept(again, redone, refused)
