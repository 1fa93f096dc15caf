// AEM HTML report: filters, paginated session list, turn graph, turn details.
// Every string from the report is untrusted (it comes from traces): this script builds
// the DOM with createElement / createTextNode / textContent only, never innerHTML,
// never an href, never an event-handler attribute.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("aem-data").textContent);
  const COMPARE = DATA.mode === "compare";
  const PAGE_SIZE = 50;
  const LABEL_TEXT = {
    root_cause: "root cause",
    prior_action_failed: "inherited",
    suspect: "suspect",
    ok: "ok",
    not_checked: "not checked",
  };
  const LANES = ["reasoning", "retrieval", "tool_call", "agent", "answer"];
  const SVG_NS = "http://www.w3.org/2000/svg";

  // ---- DOM helpers: text only --------------------------------------------------------
  function el(tag, cls, ...kids) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    for (const kid of kids) append(node, kid);
    return node;
  }
  function append(node, kid) {
    if (kid === null || kid === undefined) return;
    node.appendChild(typeof kid === "object" ? kid : document.createTextNode(String(kid)));
  }
  function svg(tag, attrs, ...kids) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    for (const kid of kids) append(node, kid);
    return node;
  }
  function show(node, visible) {
    node.classList.toggle("hidden", !visible);
  }
  function text(value) {
    if (value === null || value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  }
  function $(id) {
    return document.getElementById(id);
  }

  // ---- the index the filters run on (one small entry per session) -----------------------
  // The four counts of an entry's "labels", in place; suspects are counted apart
  // ("suspects", the session's suspect turns), so a page reads either shape.
  const LABEL_KEYS = ["root_cause", "prior_action_failed", "ok", "not_checked"];
  function labelCounts(entry) {
    const counts = LABEL_KEYS.map((key, i) => [key, entry.labels[i]]);
    counts.splice(2, 0, ["suspect", (entry.suspects || []).length]);
    return counts;
  }
  function turnLabel(turn) {
    // Same rule as aem.report.html.is_unchecked: every metric skipped (or none ran).
    if (turn.label !== "ok") return turn.label;
    return (turn.metrics || []).every((m) => m.outcome === "skip") ? "not_checked" : "ok";
  }
  function indexSession(entry, position) {
    return {
      entry, position,
      failed: new Set(entry.failed),
      labels: new Set(labelCounts(entry).filter(([, count]) => count > 0).map(([key]) => key)),
      categories: new Set(entry.categories),
      sigs: new Set(entry.ranking),
      suspectSigs: new Set(entry.suspect_ranking || []),
      search: (entry.id + " " + entry.traces).toLowerCase(),
    };
  }
  const INDEX = DATA.sessions.map(indexSession);
  const BY_ID = new Map(INDEX.map((item) => [item.entry.id, item]));

  // ---- full sessions: gzip + base64, unpacked once, each parsed when first opened ---------
  async function unpack() {
    const holder = $("aem-sessions");
    const packed = holder.textContent.trim();
    holder.textContent = "";
    let bytes;
    if (Uint8Array.fromBase64) {
      bytes = Uint8Array.fromBase64(packed);
    } else {
      const binary = atob(packed);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    // Kept as bytes, cut at newlines: decoding ~90 MB into one string would cost more
    // than the decompression; one session is decoded when it is opened.
    const raw = new Uint8Array(await new Response(stream).arrayBuffer());
    const starts = [0];
    for (let at = raw.indexOf(10); at !== -1; at = raw.indexOf(10, at + 1)) starts.push(at + 1);
    starts.push(raw.length + 1);
    return { raw, starts, decoder: new TextDecoder() };
  }
  // Started once the first page of the list is drawn (or by the first click, if sooner).
  let LINES = null;
  const lines = () => LINES || (LINES = unpack());
  const PARSED = new Map();
  async function details(position) {
    if (!PARSED.has(position)) {
      const { raw, starts, decoder } = await lines();
      const line = decoder.decode(raw.subarray(starts[position], starts[position + 1] - 1));
      PARSED.set(position, JSON.parse(line));
    }
    return PARSED.get(position);
  }

  // sig: a row of the root-cause ranking, or (suspectSig) of the suspects' ranking.
  const state = { q: "", metric: "", label: "", category: null, sig: null, suspectSig: null, status: "", page: 0 };
  let matched = INDEX;

  function matches(item) {
    if (state.q && !item.search.includes(state.q)) return false;
    if (state.metric && !item.failed.has(state.metric)) return false;
    if (state.label && !item.labels.has(state.label)) return false;
    if (state.category !== null && !item.categories.has(state.category)) return false;
    if (state.sig !== null && !item.sigs.has(state.sig)) return false;
    if (state.suspectSig !== null && !item.suspectSigs.has(state.suspectSig)) return false;
    if (state.status && item.entry.status !== state.status) return false;
    return true;
  }
  function applyFilters() {
    matched = INDEX.filter(matches);
    state.page = 0;
    renderList();
  }

  // ---- session list ----------------------------------------------------------------------
  function statusChip(status) {
    return el("span", "st st-" + status.split(" ").join("-"), status);
  }
  function labelChips(entry) {
    const box = el("span", "chips");
    for (const [key, count] of labelCounts(entry)) {
      if (count) box.appendChild(el("span", "lab lab-" + key, count + " " + LABEL_TEXT[key]));
    }
    return box;
  }
  // Root causes, then suspects (in the suspect colour, marked as such: no failure).
  function causesCell(entry) {
    const cell = el("td", "causes");
    const rows = entry.causes.map((c) => [c, null]).concat((entry.suspects || []).map((c) => [c, "suspect"]));
    for (const [[turn, metrics, kind, name, category], cls] of rows) {
      const line = el("div", cls, el("b", null, turn), " ", cls ? "suspect: " + metrics + " unverified" : metrics,
        " @ ", el("span", "where", kind + " " + name));
      if (category) append(line, el("span", "cat", category));
      cell.appendChild(line);
    }
    return cell;
  }
  function listRow(item) {
    const entry = item.entry;
    const row = el("tr", "srow");
    row.tabIndex = 0;
    row.dataset.session = String(item.position);
    row.appendChild(el("td", "sid", entry.id));
    if (COMPARE) row.appendChild(el("td", null, statusChip(entry.status)));
    row.append(el("td", "num", entry.turns), el("td", null, labelChips(entry)), causesCell(entry), el("td", "dim", entry.notes));
    return row;
  }
  function renderList() {
    const pages = Math.max(1, Math.ceil(matched.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE_SIZE;
    const body = document.createElement("tbody");
    for (const item of matched.slice(start, start + PAGE_SIZE)) body.appendChild(listRow(item));
    const table = $("session-list");
    table.replaceChild(body, table.tBodies[0]);
    $("count").textContent = matched.length + " of " + INDEX.length + " sessions match";
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
    const open = $("detail").dataset.position;
    for (const row of body.rows) row.classList.toggle("selected", row.dataset.session === open);
  }

  // ---- the turn graph --------------------------------------------------------------------
  // Edges as the evaluator built them (the report's "edges": source and target turn ids,
  // kind = why the target consumed the source's output). An edge is marked "carries" when
  // a failure propagated along it: its target inherits a failure its source had or inherited.
  function graphEdges(session) {
    const turns = new Map((session.turns || []).map((t) => [t.turn_id, t]));
    const failing = (t) => t && (t.label === "root_cause" || t.label === "prior_action_failed");
    return (session.edges || []).map((e) => {
      const a = turns.get(e.source), b = turns.get(e.target);
      return { source: e.source, target: e.target, kind: String(e.kind || ""), carries: failing(a) && b && b.label === "prior_action_failed" };
    });
  }
  function edgeShape(a, b, rows) {
    // One row apart: a straight line. Further: an arc bulging left of both lanes, wider
    // the more rows it spans, so edges from one turn fan out.
    if (rows <= 1) return { a, b, c: null, d: `M${a.x},${a.y} L${b.x},${b.y}` };
    const c = { x: Math.min(a.x, b.x) - 18 - Math.min(110, rows * 16), y: (a.y + b.y) / 2 };
    return { a, b, c, d: `M${a.x},${a.y} Q${c.x},${c.y} ${b.x},${b.y}` };
  }
  function pointAt(shape, t) {
    const { a, b, c } = shape;
    if (!c) return { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t };
    const u = 1 - t;
    return { x: u * u * a.x + 2 * u * t * c.x + t * t * b.x, y: u * u * a.y + 2 * u * t * c.y + t * t * b.y };
  }

  // ---- edge labels that never overprint ----------------------------------------------------
  // Why: a label at its edge's midpoint lands on another's wherever edges cross at one
  // height (a fan-out followed by another), and a smear of words says nothing. Edges of one
  // kind leaving one turn for three or more (a fan-out; else arriving at one: a fan-in) get
  // one label, "decision ×6", near the turn they share; every label is then placed at the
  // first point along its edge where its box (measured in the page's font) overlaps no
  // label and no node, else moved up or down from its edge until it overlaps nothing.
  const FAN = 3;
  const LABEL_H = 11;
  const ALONG = { single: [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8], out: [0.2, 0.28, 0.14, 0.36, 0.44], in: [0.8, 0.72, 0.86, 0.64, 0.56] };
  let measureContext = null;
  function labelWidth(words) {
    if (measureContext === null) {
      measureContext = document.createElement("canvas").getContext("2d") || false;
      if (measureContext) measureContext.font = "9.5px " + getComputedStyle(document.body).fontFamily;
    }
    return (measureContext ? measureContext.measureText(words).width : words.length * 6) + 3;
  }
  function labelGroups(edges) {
    // [{ words, members, where: "single" | "out" | "in" }]: fan-outs first, then fan-ins.
    const by = (key) => {
      const groups = new Map();
      for (const edge of edges) {
        const k = key(edge) + "\u0000" + edge.kind;
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(edge);
      }
      return [...groups.values()].filter((members) => members.length >= FAN);
    };
    const grouped = new Set();
    const found = [];
    for (const [where, key] of [["out", (e) => e.source], ["in", (e) => e.target]]) {
      for (const members of by(key)) {
        const free = members.filter((e) => !grouped.has(e));
        if (free.length < FAN) continue;
        free.forEach((e) => grouped.add(e));
        found.push({ words: free[0].kind + " ×" + free.length, members: free, where });
      }
    }
    for (const edge of edges) if (!grouped.has(edge)) found.push({ words: edge.kind, members: [edge], where: "single" });
    return found;
  }
  function overlaps(box, taken) {
    return taken.some((o) => box.x < o.x + o.w && o.x < box.x + box.w && box.y < o.y + o.h && o.y < box.y + box.h);
  }
  function labelBox(point, width, straight) {
    // Right of a straight edge (text-anchor start), left of an arc (text-anchor end).
    const x = straight ? point.x + 6 : point.x - 4 - width;
    return { x, y: point.y + 3 - 9, w: width, h: LABEL_H, tx: straight ? x : x + width, ty: point.y + 3, anchor: straight ? "start" : "end" };
  }
  function placeLabel(group, shape, taken) {
    const width = labelWidth(group.words);
    const straight = !shape.c;
    const fits = (box) => box.x >= 2 && !overlaps(box, taken);
    for (const t of ALONG[group.where]) {
      const box = labelBox(pointAt(shape, t), width, straight);
      if (fits(box)) return box;
    }
    const home = labelBox(pointAt(shape, ALONG[group.where][0]), width, straight);
    for (let step = 1; step < 400; step++) {
      const shift = (step % 2 ? 1 : -1) * Math.ceil(step / 2) * (LABEL_H + 1);
      const box = { ...home, y: home.y + shift, ty: home.ty + shift };
      if (box.y >= 0 && fits(box)) return box;
    }
    return home;
  }
  function drawEdgeLabels(edges, shapes, nodes) {
    // The label layer: one text per label group, placed clear of nodes and other labels.
    const layer = svg("g", { class: "elabels" });
    const taken = nodes.map((p) => ({ x: p.x - 13, y: p.y - 13, w: 26, h: 26 }));
    for (const group of labelGroups(edges)) {
      const middle = group.members[Math.floor((group.members.length - 1) / 2)];
      const box = placeLabel(group, shapes.get(middle), taken);
      taken.push(box);
      const carries = group.members.some((e) => e.carries);
      const label = svg("text", { x: box.tx, y: box.ty, class: "elabel elabel-" + group.where + (carries ? " carries" : ""), "text-anchor": box.anchor }, group.words);
      if (group.members.length > 1) {
        label.appendChild(svg("title", {}, group.members.map((e) => e.source + " → " + e.target).join(", ")));
      }
      layer.appendChild(label);
    }
    return { layer, bottom: Math.max(0, ...taken.map((box) => box.y + box.h)) };
  }
  function lanesOf(turns) {
    const kinds = new Set(turns.map((t) => t.kind));
    const known = LANES.filter((k) => kinds.has(k));
    return known.concat([...kinds].filter((k) => !LANES.includes(k)).sort());
  }
  function drawGraph(session, onPick) {
    const turns = session.turns || [];
    const lanes = lanesOf(turns);
    const rowH = 40, laneW = 92, left = 170, top = 46;
    const nameX = left + (lanes.length - 1) * laneW + 40;
    const pos = new Map();
    turns.forEach((t, i) => pos.set(t.turn_id, { x: left + lanes.indexOf(t.kind) * laneW, y: top + i * rowH, row: i }));
    const width = nameX + 190;
    const height = top + Math.max(1, turns.length) * rowH;
    const root = svg("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    root.appendChild(svg("title", {}, "turn graph of " + session.session_id));
    root.appendChild(arrowMarker());
    lanes.forEach((lane, i) => {
      root.appendChild(svg("text", { x: left + i * laneW, y: 18, class: "lane", "text-anchor": "middle" }, lane.replace("_", " ")));
    });
    const edges = graphEdges(session).filter((e) => pos.has(e.source) && pos.has(e.target));
    const shapes = new Map();
    for (const edge of edges) {
      const a = pos.get(edge.source), b = pos.get(edge.target);
      const shape = edgeShape(a, b, Math.abs(b.row - a.row));
      shapes.set(edge, shape);
      const group = svg("g", { class: "edge edge-" + edge.kind.replace(/[^a-z_]/g, "") + (edge.carries ? " carries" : "") });
      group.dataset.source = edge.source;
      group.dataset.target = edge.target;
      group.appendChild(svg("path", { d: shape.d, "marker-end": "url(#arrow)" }));
      group.appendChild(svg("title", {}, edge.kind)); // the edge's own kind, on hover
      root.appendChild(group);
    }
    const labels = drawEdgeLabels(edges, shapes, [...pos.values()]);
    root.appendChild(labels.layer);
    if (labels.bottom + 4 > height) {
      root.setAttribute("height", String(labels.bottom + 4));
      root.setAttribute("viewBox", `0 0 ${width} ${labels.bottom + 4}`);
    }
    for (const turn of turns) root.appendChild(graphNode(turn, pos.get(turn.turn_id), nameX, onPick));
    const box = el("figure", "graphbox", root);
    const caption = edges.length
      ? "Edges of the turn graph, labelled by kind (the target consumed the source's output); red: a failure propagated along it."
      : "No edges: no turn consumed another's output.";
    box.appendChild(el("figcaption", "dim", caption));
    return box;
  }
  function arrowMarker() {
    const defs = svg("defs", {});
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 19, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
    defs.appendChild(marker);
    return defs;
  }
  function graphNode(turn, p, labelX, onPick) {
    const group = svg("g", { class: "node lab-" + turn._label, tabindex: 0, role: "button" });
    group.dataset.turn = turn.turn_id;
    group.appendChild(svg("title", {}, turn.turn_id + " " + turn.kind + " " + turn.name + ": " + LABEL_TEXT[turn._label]));
    group.appendChild(svg("circle", { cx: p.x, cy: p.y, r: 11 }));
    group.appendChild(svg("text", { x: p.x, y: p.y + 4, "text-anchor": "middle", class: "nid" }, turn.turn_id));
    group.appendChild(svg("line", { x1: p.x + 12, y1: p.y, x2: labelX, y2: p.y, class: "leader" }));
    const name = turn.name.length > 28 ? turn.name.slice(0, 27) + "…" : turn.name;
    group.appendChild(svg("text", { x: labelX + 4, y: p.y + 4, class: "nname" }, name));
    group.addEventListener("click", () => onPick(turn.turn_id));
    group.addEventListener("keydown", (e) => { if (e.key === "Enter") onPick(turn.turn_id); });
    return group;
  }

  // ---- session detail ---------------------------------------------------------------------
  function turnRow(turn, onPick) {
    const row = el("tr", "trow lab-row-" + turn._label);
    row.tabIndex = 0;
    row.dataset.turn = turn.turn_id;
    const failed = (turn.metrics || []).filter((m) => m.outcome === "fail").map((m) => m.name);
    if ((state.metric && failed.includes(state.metric)) || (state.label && state.label === turn._label)) row.classList.add("match");
    // A suspect failed nothing: its column names the metrics that left it unverified.
    const unverified = turn._label === "suspect" ? (turn.metrics || []).filter((m) => m.outcome === "unverified").map((m) => m.name + " (unverified)") : [];
    const label = el("td", null, el("span", "lab lab-" + turn._label, LABEL_TEXT[turn._label]));
    if ((turn.inherited_from || []).length) append(label, el("span", "dim", " ← " + turn.inherited_from.join(", ")));
    row.append(el("td", null, turn.turn_id), el("td", null, turn.kind), el("td", "name", turn.name), label,
      el("td", unverified.length ? "sus" : null, failed.concat(unverified).join(", ")), el("td", "mono", (turn.span_ids || []).join(" ")));
    row.addEventListener("click", () => onPick(turn.turn_id));
    row.addEventListener("keydown", (e) => { if (e.key === "Enter") onPick(turn.turn_id); });
    return row;
  }
  function turnTable(session, onPick) {
    const head = el("tr", null, ...["turn", "kind", "name", "label", "failed metrics", "span ids"].map((h) => el("th", null, h)));
    const body = el("tbody", null, ...(session.turns || []).map((t) => turnRow(t, onPick)));
    return el("table", "turns", el("thead", null, head), body);
  }
  function evidenceTable(evidence) {
    const head = el("tr", null, ...["span", "field", "expected", "actual", "detail"].map((h) => el("th", null, h)));
    const rows = evidence.map((e) => el("tr", null, el("td", "mono", text(e.span_id)), el("td", null, text(e.field)),
      el("td", "val", text(e.expected)), el("td", "val", text(e.actual)), el("td", null, text(e.detail))));
    return el("table", "evidence", el("thead", null, head), el("tbody", null, ...rows));
  }
  function metricBlock(metric) {
    const block = el("div", "metric o-" + metric.outcome);
    const score = metric.score === undefined || metric.score === null ? "" : " score " + metric.score;
    const threshold = metric.threshold === undefined || metric.threshold === null ? "" : " (threshold " + metric.threshold + ")";
    block.appendChild(el("div", "mhead", el("b", null, metric.name), " ", el("span", "out out-" + metric.outcome, metric.outcome), score + threshold));
    block.appendChild(el("p", "explanation", metric.explanation || ""));
    if ((metric.evidence || []).length) block.appendChild(evidenceTable(metric.evidence));
    if ((metric.unverified || []).length) block.appendChild(unverifiedList(metric.unverified));
    return block;
  }
  // Claims nothing proved wrong and nothing confirmed, each with its closest passage.
  function unverifiedList(claims) {
    const items = claims.map((c) => el("li", null, el("span", "claim", text(c.claim)),
      el("div", "closest", "closest passage" + (c.source ? " (" + text(c.source) + ")" : "") +
        (c.score === null || c.score === undefined ? "" : ", score " + c.score) + ": " +
        (c.closest === null || c.closest === undefined ? "none" : text(c.closest)))));
    return el("div", "unverified", el("p", null, claims.length + " claim(s) unverified: no passage says them and nothing in them is wrong"), el("ul", null, ...items));
  }
  function turnDetail(session, turnId) {
    const turn = (session.turns || []).find((t) => t.turn_id === turnId);
    const box = el("div", "turn-detail");
    box.id = "turn-detail";
    if (!turn) return box;
    box.appendChild(el("h3", null, "turn " + turn.turn_id + " · " + turn.kind + " · " + turn.name + " · ", el("span", "lab lab-" + turn._label, LABEL_TEXT[turn._label])));
    if ((turn.inherited_from || []).length) box.appendChild(el("p", null, "inherits the failure of " + turn.inherited_from.join(", ")));
    box.appendChild(el("p", "mono", "span ids: " + (turn.span_ids || []).join(", ") + (turn.trace_id ? " · trace " + turn.trace_id : "")));
    const metrics = turn.metrics || [];
    if (!metrics.length) box.appendChild(el("p", "dim", "No metric ran on this turn."));
    for (const metric of metrics) box.appendChild(metricBlock(metric));
    return box;
  }
  function sessionHeader(item, shown, version, hasBefore) {
    const head = el("div", "dhead", el("h2", null, "session ", el("span", "sid", shown.session_id)));
    if (COMPARE) {
      head.appendChild(statusChip(item.entry.status));
      for (const which of hasBefore ? ["after", "before"] : []) {
        const button = el("button", which === version ? "tab active" : "tab", which === "after" ? "later run" : "earlier run");
        button.type = "button";
        button.dataset.version = which;
        button.addEventListener("click", () => openSession(item, null, which));
        head.appendChild(button);
      }
    }
    const meta = "traces: " + (shown.trace_ids || []).join(", ") + (item.entry.notes ? " · " + item.entry.notes : "");
    head.appendChild(el("p", "dim mono", meta));
    for (const issue of (shown.issues || []).slice(0, 20)) head.appendChild(el("p", "issue", issue.kind + ": " + issue.message));
    return head;
  }
  let opening = 0;
  async function openSession(item, turnId, version) {
    const ticket = ++opening;
    const full = await details(item.position);
    if (ticket !== opening) return;  // a later click won
    const shown = version === "before" && full.before ? full.before : full.session;
    for (const turn of shown.turns || []) turn._label = turnLabel(turn);
    const detail = $("detail");
    const pick = (id) => {
      detail.replaceChild(turnDetail(shown, id), $("turn-detail"));
      for (const node of detail.querySelectorAll("[data-turn]")) node.classList.toggle("selected", node.dataset.turn === id);
    };
    const turns = shown.turns || [];
    const flagged = turns.find((t) => t._label === "root_cause") || turns.find((t) => t._label === "suspect");
    const first = turnId || (flagged || turns[0] || {}).turn_id;
    detail.replaceChildren(sessionHeader(item, shown, version || "after", Boolean(full.before)),
      el("div", "split", drawGraph(shown, pick), turnTable(shown, pick)), turnDetail(shown, first));
    detail.dataset.session = shown.session_id;
    detail.dataset.position = String(item.position);
    detail.dataset.version = version || "after";
    show(detail, true);
    if (first) pick(first);
    for (const row of document.querySelectorAll("#session-list tr.srow")) row.classList.toggle("selected", row.dataset.session === String(item.position));
  }

  // ---- wiring -------------------------------------------------------------------------
  function pickRank(index, suspect) {
    const rank = suspect ? DATA.suspects[index] : DATA.ranking[index];
    state.sig = suspect ? null : index;
    state.suspectSig = suspect ? index : null;
    $("f-sig-kind").textContent = suspect ? "suspect" : "root cause";
    $("f-sig-text").textContent = rank.metric + " @ " + rank.kind + " " + rank.name + (rank.status ? " (" + rank.status + ")" : "");
    show($("f-sig"), true);
    for (const row of document.querySelectorAll("#ranking tr.bar")) row.classList.toggle("selected", !suspect && row.dataset.rank === String(index));
    for (const row of document.querySelectorAll("#suspects tr.bar")) row.classList.toggle("selected", Boolean(suspect) && row.dataset.suspect === String(index));
    applyFilters();
    const example = (rank.examples || [])[0];
    const item = example && BY_ID.get(example.session_id);
    const version = rank.status === "gone" ? "before" : "after";
    if (item) openSession(item, version === "before" ? null : example.turn_id, version);
    $("sessions").scrollIntoView();
  }
  function wire() {
    for (const row of document.querySelectorAll("#ranking tr.bar")) {
      row.addEventListener("click", () => pickRank(Number(row.dataset.rank)));
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") pickRank(Number(row.dataset.rank)); });
    }
    const pickCategory = (value) => {
      $("f-category").value = value;
      state.category = value.slice(1);
      for (const row of document.querySelectorAll("#categories tr.catrow")) row.classList.toggle("selected", row.dataset.category === value);
      applyFilters();
      $("sessions").scrollIntoView();
    };
    for (const row of document.querySelectorAll("#categories tr.catrow")) {
      row.addEventListener("click", (e) => {
        const sig = e.target.closest(".sig");
        if (sig && sig.dataset.rank !== "") pickRank(Number(sig.dataset.rank));
        else pickCategory(row.dataset.category);
      });
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") pickCategory(row.dataset.category); });
    }
    for (const row of document.querySelectorAll("#suspects tr.bar")) {
      row.addEventListener("click", () => pickRank(Number(row.dataset.suspect), true));
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") pickRank(Number(row.dataset.suspect), true); });
    }
    for (const [button, rows] of [["ranking-more", "#ranking tr.extra"], ["suspects-more", "#suspects tr.extra"]]) {
      const more = $(button);
      if (more) more.addEventListener("click", () => { for (const r of document.querySelectorAll(rows)) show(r, true); show(more, false); });
    }
    $("f-q").addEventListener("input", (e) => { state.q = e.target.value.trim().toLowerCase(); applyFilters(); });
    $("f-metric").addEventListener("change", (e) => { state.metric = e.target.value; applyFilters(); });
    $("f-label").addEventListener("change", (e) => { state.label = e.target.value; applyFilters(); });
    $("f-category").addEventListener("change", (e) => { const v = e.target.value; state.category = v ? v.slice(1) : null; applyFilters(); });
    if ($("f-status")) $("f-status").addEventListener("change", (e) => { state.status = e.target.value; applyFilters(); });
    $("f-sig-clear").addEventListener("click", clearSig);
    $("f-clear").addEventListener("click", clearAll);
    $("prev").addEventListener("click", () => { state.page -= 1; renderList(); });
    $("next").addEventListener("click", () => { state.page += 1; renderList(); });
    const list = $("session-list");
    const openRow = (target) => {
      const row = target.closest("tr.srow");
      if (row) openSession(INDEX[Number(row.dataset.session)], null, "after");
    };
    list.addEventListener("click", (e) => openRow(e.target));
    list.addEventListener("keydown", (e) => { if (e.key === "Enter") openRow(e.target); });
  }
  function clearSig() {
    state.sig = null;
    state.suspectSig = null;
    show($("f-sig"), false);
    for (const row of document.querySelectorAll("#ranking tr.bar.selected, #suspects tr.bar.selected")) row.classList.remove("selected");
    applyFilters();
  }
  function clearAll() {
    for (const id of ["f-q", "f-metric", "f-label", "f-category", "f-status"]) if ($(id)) $(id).value = "";
    for (const row of document.querySelectorAll("#categories tr.catrow.selected")) row.classList.remove("selected");
    Object.assign(state, { q: "", metric: "", label: "", category: null, status: "" });
    clearSig();
  }

  wire();
  renderList();
  performance.mark("aem-list");
  setTimeout(() => lines().then(() => {
    performance.mark("aem-details");
    document.body.dataset.ready = "1";
  }, (error) => {
    $("count").textContent = "could not unpack the sessions: " + error;
  }), 0);
})();
