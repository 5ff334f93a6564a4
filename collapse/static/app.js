// The search page of the collapsing proxy. Plain JavaScript, no build step, no dependencies:
// it calls only this proxy — /_search (index list), /{index}/_search, /{index}/_collapse/{id}.
// Response shapes: docs/CONTRACTS.md ("collapse" on the answer, "_collapse" on each hit).
"use strict";

(function () {
  const PAGE_SIZE = 10;
  const MARK_OPEN = "\uE000"; // highlight tags that cannot occur in text: the snippet is built
  const MARK_CLOSE = "\uE001"; // from text nodes and <mark> elements, never parsed as HTML
  const SOURCE = ["title", "url", "site", "case", "group"];

  const $ = (id) => document.getElementById(id);
  const form = $("search");
  const qInput = $("q");
  const indexSelect = $("index");
  const showAll = $("show-all");
  const statusLine = $("status");
  const savedLine = $("saved");
  const results = $("results");
  const pager = $("pager");
  const prev = $("prev");
  const next = $("next");
  const pageLabel = $("page-label");

  const state = { q: "", index: "demo", page: 0, all: false };
  let lastSearch = null; // the search body of the results on screen, reused by the expander
  let searchSeq = 0; // answers to superseded searches are dropped

  // ------------------------------------------------------------------ requests

  async function callProxy(path, body, params) {
    const url = path + (params && params.toString() ? "?" + params.toString() : "");
    const resp = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    let data = null;
    try {
      data = await resp.json();
    } catch (_) {
      data = null;
    }
    if (!resp.ok) {
      const reason =
        (data && data.error && (data.error.reason || data.error.type || data.error)) ||
        resp.statusText;
      throw new Error(`${resp.status}: ${reason}`);
    }
    return data;
  }

  function queryFor(q) {
    if (!q.trim()) return { match_all: {} };
    return {
      multi_match: { query: q, fields: ["title^2", "body"], type: "best_fields" },
    };
  }

  function highlight() {
    return {
      pre_tags: [MARK_OPEN],
      post_tags: [MARK_CLOSE],
      fields: {
        body: { fragment_size: 200, number_of_fragments: 2, no_match_size: 200 },
      },
    };
  }

  // ------------------------------------------------------------------ rendering helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child);
    }
    return node;
  }

  // Text with MARK_OPEN/MARK_CLOSE around matches -> text nodes and <mark> elements.
  function marked(text) {
    const frag = document.createDocumentFragment();
    const parts = String(text).split(MARK_OPEN);
    frag.append(parts[0]);
    for (const part of parts.slice(1)) {
      const [hit, rest] = part.split(MARK_CLOSE);
      frag.append(el("mark", { text: hit }));
      if (rest) frag.append(rest);
    }
    return frag;
  }

  function snippetOf(hit) {
    const fragments = (hit.highlight && hit.highlight.body) || [];
    const p = el("p", { class: "snippet" });
    fragments.forEach((fragment, i) => {
      if (i) p.append(" \u2026 ");
      p.append(marked(fragment.replace(/\s+/g, " ")));
    });
    return p;
  }

  function safeHref(url) {
    return /^https?:\/\//i.test(url || "") ? url : null;
  }

  function titleLink(hit, level) {
    const src = hit._source || {};
    const title = src.title || hit._id;
    const href = safeHref(src.url);
    const heading = el(level, { class: "title" });
    heading.append(href ? el("a", { href, text: title }) : el("span", { text: title }));
    return heading;
  }

  function plural(n, one, many) {
    return `${n} ${n === 1 ? one : many}`;
  }

  function percent(x) {
    return `${Math.round(Number(x) * 100)}%`;
  }

  // ------------------------------------------------------------------ results

  function renderHit(hit, position) {
    const src = hit._source || {};
    const info = hit._collapse || null;
    const folded = info ? Number(info.folded || 0) : 0;
    const li = el("li", {
      class: "result",
      "data-id": hit._id,
      "data-index": hit._index,
      "data-group": src.group,
      "data-folded": folded,
    });
    li.append(
      titleLink(hit, "h2"),
      el("div", { class: "url", text: src.url || "" }),
      snippetOf(hit),
    );
    const meta = el("div", { class: "meta" });
    if (src.site) meta.append(el("span", { text: src.site }));
    if (src.group) {
      meta.append(el("span", { class: "label", title: "demo corpus label", text: src.group }));
    }
    li.append(meta);
    if (folded > 0) {
      const listId = `members-${position}`;
      const button = el("button", {
        type: "button",
        class: "expander",
        "aria-expanded": "false",
        "aria-controls": listId,
      });
      const members = el("ul", {
        id: listId,
        class: "members",
        "aria-label": `Results similar to ${src.title || hit._id}`,
        hidden: true,
      });
      const setLabel = (open) => {
        button.textContent = open
          ? `Hide ${plural(folded, "similar result", "similar results")}`
          : `${plural(folded, "similar result", "similar results")} omitted \u2014 show`;
      };
      setLabel(false);
      button.addEventListener("click", () => toggleMembers(hit, button, members, setLabel));
      li.append(button, members);
    }
    return li;
  }

  async function toggleMembers(hit, button, list, setLabel) {
    const open = button.getAttribute("aria-expanded") === "true";
    if (open) {
      button.setAttribute("aria-expanded", "false");
      list.hidden = true;
      setLabel(false);
      return;
    }
    button.setAttribute("aria-expanded", "true");
    list.hidden = false;
    setLabel(true);
    if (list.dataset.loaded) return;
    list.replaceChildren(el("li", { class: "loading", text: "Loading similar results\u2026" }));
    try {
      const path = `/${encodeURIComponent(hit._index)}/_collapse/${encodeURIComponent(hit._id)}`;
      // The search's own body (query, from, size): the expander runs that search again and
      // lists what it folded behind this result; the query string pages the members.
      const data = await callProxy(path, lastSearch, new URLSearchParams({ size: "100" }));
      const members = (data && data.hits && data.hits.hits) || [];
      list.replaceChildren(...members.map(renderMember));
      if (!members.length) list.append(el("li", { text: "No similar results any more." }));
      list.dataset.loaded = "1";
    } catch (err) {
      list.replaceChildren(
        el("li", { class: "error", text: `Could not load similar results (${err.message}).` }),
      );
    }
  }

  function renderMember(hit) {
    const src = hit._source || {};
    const info = hit._collapse || {};
    const li = el("li", { class: "member", "data-id": hit._id, "data-group": src.group });
    const facts = [];
    if (info.hamming !== undefined) facts.push(`distance ${plural(info.hamming, "bit", "bits")}`);
    if (info.similarity !== undefined) facts.push(`similarity ${percent(info.similarity)}`);
    li.append(
      titleLink(hit, "h3"),
      el("div", { class: "url", text: src.url || "" }),
      el("div", { class: "distance", text: facts.join(" \u00b7 ") }),
    );
    return li;
  }

  function describe(data, from, shown) {
    const total = (data.hits && data.hits.total) || { value: shown, relation: "eq" };
    const approx = total.relation === "gte" ? "more than " : "";
    const c = data.collapse;
    const range = shown ? `${from + 1}\u2013${from + shown}` : "none";
    // The figures as data too, for scripts and tests: documents matched, groups (if counted).
    statusLine.dataset.total = String(total.value);
    statusLine.dataset.groups = c && c.total_groups != null ? String(c.total_groups) : "";
    if (state.all || !c || c.enabled === false) {
      statusLine.textContent =
        `${approx}${plural(total.value, "result", "results")} \u00b7 showing ${range}` +
        " \u00b7 collapsing off (all results)";
      savedLine.hidden = true;
      return;
    }
    if (c.degraded) {
      statusLine.textContent =
        `${approx}${plural(total.value, "result", "results")} \u00b7 showing ${range}`;
      savedLine.hidden = false;
      savedLine.textContent =
        `Collapsing was skipped for this page (${c.reason || "degraded"}): ` +
        "results are shown as Elasticsearch ranked them.";
      return;
    }
    const groups = c.total_groups;
    if (groups !== undefined && groups !== null) {
      const approxGroups = c.total_groups_relation === "gte" ? "more than " : "";
      statusLine.textContent =
        `${approxGroups}${plural(groups, "distinct result", "distinct results")} ` +
        `(${approx}${total.value} matching documents) \u00b7 showing ${range}`;
      const saved = total.value - groups;
      savedLine.hidden = false;
      savedLine.textContent =
        saved > 0 && total.relation === "eq" && approxGroups === ""
          ? `Collapsing saved ${plural(saved, "result", "results")}: ` +
            `${groups} instead of ${total.value} (${percent(saved / total.value)} fewer).`
          : `Collapsing folded ${plural(c.folded || 0, "near-duplicate", "near-duplicates")} ` +
            "on this page.";
    } else {
      statusLine.textContent =
        `${approx}${plural(total.value, "matching document", "matching documents")} ` +
        `\u00b7 showing ${range}`;
      savedLine.hidden = false;
      savedLine.textContent = `Collapsing folded ${plural(
        c.folded || 0,
        "near-duplicate",
        "near-duplicates",
      )} on this page.`;
    }
  }

  function lastPage(data, from, shown) {
    if (shown < PAGE_SIZE) return true;
    const c = data.collapse;
    const total = (data.hits && data.hits.total && data.hits.total.value) || 0;
    if (!state.all && c && !c.degraded && c.total_groups !== undefined && c.total_groups !== null) {
      return c.total_groups_relation !== "gte" && from + shown >= c.total_groups;
    }
    return from + shown >= total && data.hits.total.relation !== "gte";
  }

  // ------------------------------------------------------------------ search

  function syncUrl() {
    const params = new URLSearchParams();
    if (state.q) params.set("q", state.q);
    if (state.index !== "demo") params.set("index", state.index);
    if (state.page) params.set("page", String(state.page + 1));
    if (state.all) params.set("all", "1");
    const query = params.toString();
    history.replaceState(null, "", query ? `?${query}` : location.pathname);
  }

  async function search({ focusResults = false } = {}) {
    const seq = ++searchSeq;
    syncUrl();
    const from = state.page * PAGE_SIZE;
    const query = queryFor(state.q);
    const body = {
      query,
      from,
      size: PAGE_SIZE,
      _source: SOURCE,
      highlight: highlight(),
      track_total_hits: true,
    };
    const params = new URLSearchParams();
    if (state.all) params.set("collapse", "false");
    else params.set("collapse_total", "true");
    results.setAttribute("aria-busy", "true");
    statusLine.textContent = "Searching\u2026";
    try {
      const data = await callProxy(`/${encodeURIComponent(state.index)}/_search`, body, params);
      if (seq !== searchSeq) return;
      lastSearch = body;
      const hits = (data.hits && data.hits.hits) || [];
      results.setAttribute("start", String(from + 1));
      results.replaceChildren(...hits.map((hit, i) => renderHit(hit, from + i)));
      results.dataset.mode = state.all ? "all" : "collapsed";
      describe(data, from, hits.length);
      pager.hidden = state.page === 0 && lastPage(data, from, hits.length);
      prev.disabled = state.page === 0;
      next.disabled = lastPage(data, from, hits.length);
      pageLabel.textContent = `Page ${state.page + 1}`;
      if (!hits.length) {
        results.replaceChildren(el("li", { class: "empty", text: "No results." }));
      }
      if (focusResults) results.focus();
    } catch (err) {
      if (seq !== searchSeq) return;
      results.replaceChildren();
      pager.hidden = true;
      savedLine.hidden = true;
      statusLine.textContent = `The search failed: ${err.message}`;
    } finally {
      if (seq === searchSeq) results.removeAttribute("aria-busy");
    }
  }

  async function loadIndices() {
    // Indices holding fingerprints, from one aggregation on _index (collapsing off).
    const body = {
      size: 0,
      query: { exists: { field: "collapse_fp.exact_key" } },
      aggs: { indices: { terms: { field: "_index", size: 100 } } },
    };
    let names = [];
    try {
      const data = await callProxy("/_search", body, new URLSearchParams({ collapse: "false" }));
      const buckets = (data.aggregations && data.aggregations.indices.buckets) || [];
      names = buckets.map((b) => b.key).filter((name) => !name.startsWith("."));
    } catch (_) {
      names = [];
    }
    if (!names.includes(state.index)) names.push(state.index);
    names.sort((a, b) => (a === "demo" ? -1 : b === "demo" ? 1 : a.localeCompare(b)));
    indexSelect.replaceChildren(...names.map((name) => el("option", { value: name, text: name })));
    indexSelect.value = state.index;
  }

  // ------------------------------------------------------------------ wiring

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    state.q = qInput.value.trim();
    state.index = indexSelect.value || "demo";
    state.page = 0;
    search();
  });
  indexSelect.addEventListener("change", () => {
    state.index = indexSelect.value;
    state.page = 0;
    search();
  });
  showAll.addEventListener("change", () => {
    state.all = showAll.checked;
    state.page = 0;
    search();
  });
  prev.addEventListener("click", () => {
    if (state.page > 0) {
      state.page -= 1;
      search({ focusResults: true });
    }
  });
  next.addEventListener("click", () => {
    state.page += 1;
    search({ focusResults: true });
  });
  for (const button of document.querySelectorAll("button.example")) {
    button.addEventListener("click", () => {
      qInput.value = button.dataset.q;
      state.q = button.dataset.q;
      state.page = 0;
      search();
    });
  }

  const initial = new URLSearchParams(location.search);
  state.q = initial.get("q") || "";
  state.index = initial.get("index") || "demo";
  state.page = Math.max(0, (parseInt(initial.get("page") || "1", 10) || 1) - 1);
  state.all = initial.get("all") === "1";
  qInput.value = state.q;
  showAll.checked = state.all;
  loadIndices().then(() => {
    if (state.q) search();
  });
})();
