// savant-think inspector: one small script, no framework. It reads the JSON
// API at /ui/api/… and builds the page with DOM calls. User content (ids,
// results, params, workflow text) only ever goes in as text nodes or
// attribute values: never as HTML.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const SYMBOL = { done: '✓', ready: '●', running: '◐', waiting: '⏸', failed: '✗', skipped: '⊘', pending: '○' };
// The statuses the runs list can filter by, offered even when no run has them yet.
const RUN_STATUSES = ['running', 'waiting', 'done', 'failed'];
let session = { can_act: false };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
}

const enc = encodeURIComponent;
const runHref = (wf, id, archiveId) =>
  `/ui/runs/${enc(wf)}/${enc(id)}` + (archiveId ? `?archive_id=${enc(archiveId)}` : '');
const workflowHref = (wf) => `/ui/workflows/${enc(wf)}`;
const runApi = (wf, id) => `/ui/api/runs/${enc(wf)}/${enc(id)}`;

async function api(path, options) {
  const response = await fetch(path, options);
  let body;
  try { body = await response.json(); } catch (_) { body = { error: `HTTP_${response.status}`, message: response.statusText }; }
  if (!response.ok) {
    const e = new Error(body.message || (body.details && body.details.message) || response.statusText);
    e.body = body;
    e.status = response.status;
    throw e;
  }
  return body;
}

const json = (v) => JSON.stringify(v, null, 2);
const badge = (status) => el('span', { class: `badge ${status}` }, status);
const main = () => document.getElementById('main');

function when(at) {
  if (!at) return '';
  const d = new Date(at);
  if (isNaN(d)) return at;
  const s = Math.round((Date.now() - d) / 1000);
  if (s < 0) return d.toLocaleString();
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return d.toLocaleString();
}

function crumbs(...parts) {
  const c = document.getElementById('crumbs');
  c.replaceChildren(...parts.flatMap((p, i) => (i ? [' › ', p] : [p])));
}

function notice(kind, ...content) {
  const n = document.getElementById('notice');
  if (n) n.replaceChildren(el('div', { class: `box ${kind}` }, ...content));
}

// ---- errors: what went wrong, and what helps ----------------------------

function errorView(e, workflow) {
  const b = e.body || {};
  const out = el('div', { class: 'box error', id: 'error' },
    el('strong', {}, b.error || 'ERROR'), ': ', b.message || e.message);
  if (b.details && b.details.help && !b.did_you_mean) out.append(el('div', {}, b.details.help));
  if (b.did_you_mean && b.did_you_mean.run_id) {
    out.append(el('div', {}, 'Did you mean ', el('a', { href: runHref(workflow, b.did_you_mean.run_id) }, b.did_you_mean.run_id), '?'));
  }
  if (b.did_you_mean && b.did_you_mean.step && runState.view) {
    const v = runState.view;
    out.append(el('div', {}, 'Did you mean ', el('a', { href: `${runHref(v.workflow, v.run_id)}#step=${enc(b.did_you_mean.step)}` }, b.did_you_mean.step), '?'));
  }
  if (b.did_you_mean && b.did_you_mean.workflow) {
    out.append(el('div', {}, 'Did you mean ', el('a', { href: workflowHref(b.did_you_mean.workflow) }, b.did_you_mean.workflow), '?'));
  }
  if (b.runs && b.runs.length) {
    out.append(el('div', {}, `Runs of ${workflow}: `, b.runs.flatMap((r, i) => [i ? ', ' : '', el('a', { href: runHref(workflow, r) }, r)])));
  }
  const parts = [out];
  if (b.stored && b.stored.error) {
    parts.push(el('div', { class: 'box error' }, 'The store says: ', el('strong', {}, b.stored.error), ': ', b.stored.message || ''));
  } else if (b.stored && b.stored.history) {
    parts.push(el('h2', {}, `History as stored (status ${b.stored.status}, version ${b.stored.version})`));
    parts.push(el('table', {}, el('tr', {}, el('th', {}, 'version'), el('th', {}, 'at'), el('th', {}, 'event')),
      b.stored.history.map((h) => el('tr', {}, el('td', {}, h.version), el('td', {}, h.at), el('td', {}, el('code', {}, JSON.stringify(h)))))));
  }
  parts.push(el('p', {}, el('a', { href: '/ui/' }, '← all runs')));
  return parts;
}

// ---- the runs page ---------------------------------------------------------

async function runsPage() {
  crumbs('runs');
  const q = new URLSearchParams(location.search);
  const list = el('div', { id: 'runs' }, el('p', { class: 'muted' }, 'Loading…'));
  const form = el('form', { class: 'filters', onsubmit: (ev) => ev.preventDefault() });
  const wf = el('select', { name: 'workflow', 'aria-label': 'workflow' }, el('option', { value: '' }, 'every workflow'));
  const status = el('select', { name: 'status', 'aria-label': 'status' }, el('option', { value: '' }, 'any status'));
  const search = el('input', { type: 'search', name: 'q', placeholder: 'run id contains…', value: q.get('q') || '' });
  const archived = el('input', { type: 'checkbox', name: 'archived', checked: q.get('archived') === '1' });
  form.append(wf, status, search, el('label', {}, archived, ' archived'));
  main().replaceChildren(el('div', { id: 'notice', class: 'notice' }), el('h1', {}, 'Runs'), form, list);
  const load = async (page) => {
    const params = new URLSearchParams();
    if (wf.value || q.get('workflow')) params.set('workflow', wf.value || q.get('workflow'));
    if (status.value || q.get('status')) params.set('status', status.value || q.get('status'));
    if (search.value) params.set('q', search.value);
    if (archived.checked) params.set('archived', '1');
    if (page > 1) params.set('page', page);
    history.replaceState(null, '', `/ui/${params.toString() ? '?' + params : ''}`);
    q.delete('workflow'); q.delete('status');
    try {
      const data = await api(`/ui/api/runs?${params}`);
      fillSelect(wf, data.workflows, params.get('workflow'));
      const known = [...new Set([...RUN_STATUSES, ...Object.keys(data.statuses)])];
      fillSelect(status, known, params.get('status'), Object.fromEntries(known.map((k) => [k, data.statuses[k] || 0])));
      list.replaceChildren(...runsTable(data, load));
    } catch (e) {
      list.replaceChildren(...errorView(e, params.get('workflow')));
    }
  };
  for (const input of [wf, status, archived]) input.addEventListener('change', () => load(1));
  let typing;
  search.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(() => load(1), 200); });
  await load(Number(q.get('page')) || 1);
}

function fillSelect(select, values, chosen, counts) {
  const first = select.options[0];
  select.replaceChildren(first, ...values.map((v) =>
    el('option', { value: v, selected: v === chosen }, counts ? `${v} (${counts[v]})` : v)));
  if (chosen && !values.includes(chosen)) select.append(el('option', { value: chosen, selected: true }, chosen));
}

function runsTable(data, load) {
  if (!data.runs.length) {
    return [el('p', { class: 'muted', id: 'no-runs' }, data.total ? 'No run matches.' : 'No runs yet: start one with savant-think plan WORKFLOW.')];
  }
  // A child run follows its parent, indented, with the parent's step named.
  const rows = data.runs.map((r) => el('tr', { 'data-run-id': r.run_id, 'data-depth': r.depth || 0, class: r.depth ? `child-run depth-${Math.min(r.depth, 4)}` : '' },
    el('td', {}, r.depth ? '└ ' : '', el('a', { href: workflowHref(r.workflow) }, r.workflow)),
    el('td', {}, el('a', { class: 'run-link', href: runHref(r.workflow, r.run_id, r.archive_id) }, r.run_id),
      r.archive_id ? el('div', { class: 'muted' }, r.archive_id) : null,
      r.parent && r.depth ? el('div', { class: 'muted parent-step' }, `of ${r.parent.step_id}`) : null),
    el('td', {}, badge(r.status), r.note ? el('div', { class: 'muted' }, r.note) : null),
    el('td', {}, r.version === null || r.version === undefined ? '' : r.version),
    el('td', { title: r.created_at || '' }, when(r.created_at)),
    el('td', { title: r.updated_at || '' }, when(r.updated_at)),
    el('td', {}, r.ready.slice(0, 3).join(', '), r.ready_total > 3 ? ` (+${r.ready_total - 3})` : ''),
    el('td', { class: 'run-waiting' }, (r.waiting || []).slice(0, 3).map((w) => el('div', {}, waitText(w))))));
  const table = el('table', { id: 'runs-table' },
    el('thead', {}, el('tr', {}, ['workflow', 'run', 'status', 'version', 'started', 'updated', 'ready', 'waiting'].map((h) => el('th', {}, h)))),
    el('tbody', {}, rows));
  const pager = el('div', { class: 'pager' },
    el('button', { type: 'button', disabled: data.page <= 1, onclick: () => load(data.page - 1) }, '← newer'),
    el('span', { class: 'muted' }, `page ${data.page} of ${data.pages} · ${data.total} run${data.total === 1 ? '' : 's'}`),
    el('button', { type: 'button', disabled: data.page >= data.pages, onclick: () => load(data.page + 1) }, 'older →'));
  return [table, pager];
}

// ---- the run page ----------------------------------------------------------

const runState = { view: null, nodes: new Map(), open: null, source: null };

async function runPage(workflow, runId) {
  const archiveId = new URLSearchParams(location.search).get('archive_id');
  crumbs(el('a', { href: '/ui/' }, 'runs'), el('a', { href: workflowHref(workflow) }, workflow), runId);
  document.title = `${runId} · ${workflow} · savant-think`;
  let view;
  try {
    view = await api(runApi(workflow, runId) + (archiveId ? `?archive_id=${enc(archiveId)}` : ''));
  } catch (e) {
    main().replaceChildren(el('h1', {}, `${workflow} · ${runId}`), ...errorView(e, workflow));
    return;
  }
  runState.view = view;
  const graphBox = el('div', { class: 'graph', id: 'graph' });
  const panel = el('aside', { class: 'panel', id: 'panel', hidden: true });
  const tabs = { graph: el('div', { class: 'layout' }, graphBox, panel), timeline: el('div', { id: 'timeline' }), source: el('div', { id: 'source' }), params: el('div', {}, el('pre', {}, json(view.params))) };
  const tabBar = el('div', { class: 'tabs', role: 'tablist' });
  const body = el('div', {});
  const show = (name) => {
    setHash('tab', name === 'graph' ? null : name);
    for (const b of tabBar.children) b.setAttribute('aria-selected', String(b.dataset.tab === name));
    body.replaceChildren(tabs[name]);
    if (name === 'timeline') drawTimeline(tabs.timeline, runState.view.timeline);
    if (name === 'source') loadSource(tabs.source, workflow, runId);
  };
  for (const name of Object.keys(tabs)) tabBar.append(el('button', { type: 'button', role: 'tab', 'data-tab': name, onclick: () => show(name) }, name));
  main().replaceChildren(el('div', { id: 'notice', class: 'notice' }), header(view), actions(view, archiveId), tabBar, body);
  drawGraph(graphBox, view.graph, (id) => openStep(panel, workflow, runId, id, !!view.archived));
  const hash = new URLSearchParams(location.hash.slice(1));
  show(tabs[hash.get('tab')] ? hash.get('tab') : 'graph');
  const step = hash.get('step');
  if (step) openStep(panel, workflow, runId, step, !!view.archived);
  if (!view.archived) live(workflow, runId, panel);
}

function header(view) {
  const failure = view.failure ? el('div', { class: 'box error', id: 'failure' }, el('strong', {}, 'Failed: '), view.failure.message || JSON.stringify(view.failure)) : null;
  const differs = view.file_differs ? el('div', { class: 'box warn' }, 'The workflow file on disk differs from the version this run is pinned to: see the source tab, or upgrade.') : null;
  const parent = view.parent ? el('span', { id: 'run-parent' }, 'started by ', el('a', { href: runHref(view.parent.workflow, view.parent.run_id) }, `${view.parent.workflow} · ${view.parent.run_id}`), ` at ${view.parent.step_id}`) : null;
  const forked = view.forked_from ? el('span', {}, 'forked from ', el('a', { href: runHref(view.workflow, view.forked_from.run_id) }, view.forked_from.run_id), ` at ${view.forked_from.step}`) : null;
  return el('section', { id: 'run-header' },
    el('h1', {}, `${view.workflow} · ${view.run_id} `, el('span', { id: 'run-status' }, badge(view.status)), view.archived ? ' (archived)' : ''),
    el('div', { class: 'meta' },
      el('span', { id: 'run-version' }, `version ${view.version}`),
      el('span', { title: view.created_at }, `started ${when(view.created_at)}`),
      el('span', { id: 'run-updated', title: view.updated_at }, `updated ${when(view.updated_at)}`),
      el('span', {}, `${view.events} events`), forked, parent),
    el('div', { class: 'meta', id: 'run-counts' }, countsText(view.counts)),
    el('div', { class: 'meta', id: 'run-ready' }, view.ready.length ? `ready: ${view.ready.join(', ')}` : ''),
    (view.waiting || []).length ? el('ul', { class: 'box waits', id: 'run-waiting' }, view.waiting.map((w) => el('li', {}, waitText(w)))) : null,
    failure, differs);
}

/** Sets (or, with null, removes) one `key=value` of the address's #fragment. */
function setHash(key, value) {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (value === null) hash.delete(key); else hash.set(key, value);
  const text = hash.toString();
  history.replaceState(null, '', `${location.pathname}${location.search}${text ? '#' + text : ''}`);
}

function countsText(counts) {
  return ['done', 'ready', 'running', 'waiting', 'failed', 'skipped', 'pending'].filter((k) => counts[k]).map((k) => `${counts[k]} ${k}`).join(' · ');
}

// ---- the DAG -----------------------------------------------------------------

function drawGraph(box, graph, onClick) {
  runState.nodes.clear();
  if (!graph.nodes.length) { box.replaceChildren(el('p', { class: 'muted' }, 'No DAG: the workflow does not compile.')); return; }
  const w = graph.node_w, h = graph.node_h;
  const root = svg('svg', { width: graph.width + 16, height: graph.height + 16, viewBox: `-8 -8 ${graph.width + 16} ${graph.height + 16}`, id: 'dag', role: 'img', 'aria-label': 'workflow DAG' });
  root.append(svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: 'auto' }, svg('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#8c959f' }))));
  const labels = graph.edges.length <= 400;
  const edges = svg('g', {});
  for (const e of graph.edges) {
    const d = e.points.map((p, i) => `${i ? 'L' : 'M'}${p[0]},${p[1]}`).join(' ');
    edges.append(svg('path', { class: `edge${e.inferred ? ' inferred' : ''}`, d, 'marker-end': 'url(#arrow)', 'data-from': e.from, 'data-to': e.to }, svg('title', {}, `${e.from} → ${e.to}: ${e.label}`)));
    if (labels && e.inferred) {
      const [a, b] = [e.points[e.points.length - 2], e.points[e.points.length - 1]];
      edges.append(svg('text', { class: 'edge-label', x: (a[0] + b[0]) / 2 + 4, y: (a[1] + b[1]) / 2 }, e.label));
    }
  }
  root.append(edges);
  const maxChars = Math.floor((w - 30) / 7);
  for (const n of graph.nodes) {
    const x = n.x - w / 2, y = n.y - h / 2;
    const g = svg('g', { 'data-step-id': n.id, tabindex: 0 });
    if (n.foreach) {
      g.append(svg('rect', { x: x + 8, y: y - 8, width: w, height: h, rx: 6 }), svg('rect', { x: x + 4, y: y - 4, width: w, height: h, rx: 6 }));
    }
    const sub = svg('text', { class: 'sub', x: x + 10, y: y + 34 });
    const title = svg('text', { x: x + 10, y: y + 18 });
    g.append(svg('rect', { class: 'front', x, y, width: w, height: h, rx: 6 }), title, sub, svg('title', {}, `${n.id} (${face(n)})`));
    g.addEventListener('click', () => onClick(n.id));
    g.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') onClick(n.id); });
    root.append(g);
    const node = { g, title, sub, data: n, maxChars };
    runState.nodes.set(n.id, node);
    paintNode(node, n.status, n.attempts, n.items);
  }
  box.replaceChildren(root);
}

// What a step does: the tool it calls, or the workflow a `uses:` step runs.
function face(n) { return n.call || (n.uses ? `uses ${n.uses}` : ''); }

function cut(text, max) { return text.length > max ? text.slice(0, max - 1) + '…' : text; }

function paintNode(node, status, attempts, items) {
  node.g.setAttribute('class', `node st-${status}${attempts ? ' retried' : ''}${runState.open === node.data.id ? ' selected' : ''}`);
  node.g.setAttribute('data-status', status);
  node.title.textContent = `${SYMBOL[status] || '?'} ${cut(node.data.id, node.maxChars)}`;
  let sub = status;
  if (items) {
    const total = Object.values(items).reduce((a, b) => a + b, 0);
    sub = `${status} · ${(items.done || 0) + (items.skipped || 0)}/${total} items`;
  } else if (attempts) sub = `${status} · ${attempts} refused`;
  node.sub.textContent = cut(face(node.data) ? `${sub} · ${face(node.data)}` : sub, node.maxChars + 4);
}

// ---- live updates --------------------------------------------------------------

function live(workflow, runId, panel) {
  const source = new EventSource(runApi(workflow, runId) + '/live');
  source.addEventListener('state', (ev) => {
    const s = JSON.parse(ev.data);
    const view = runState.view;
    if (s.version === view.version && document.body.dataset.version) return;
    const counts = {};
    let reshaped = s.steps.length !== runState.nodes.size;
    for (const [id, status, attempts] of s.steps) {
      counts[status] = (counts[status] || 0) + 1;
      const node = runState.nodes.get(id);
      if (!node) { reshaped = true; continue; }
      paintNode(node, status, attempts, s.items[id]);
    }
    if (reshaped && document.body.dataset.version) { location.reload(); return; }
    view.version = s.version;
    document.getElementById('run-status').replaceChildren(badge(s.status));
    document.getElementById('run-version').textContent = `version ${s.version}`;
    document.getElementById('run-updated').textContent = `updated ${when(s.updated_at)}`;
    document.getElementById('run-counts').textContent = countsText(counts);
    document.getElementById('run-ready').textContent = s.ready.length ? `ready: ${s.ready.join(', ')}` : '';
    document.body.dataset.version = String(s.version);
    if (runState.open) openStep(panel, workflow, runId, runState.open, false, true);
  });
  source.addEventListener('error', (ev) => {
    if (ev.data) notice('error', 'This run cannot be read any more: ', JSON.parse(ev.data).details.message || '');
  });
}

// ---- the step panel ------------------------------------------------------------

async function openStep(panel, workflow, runId, id, archived, quiet) {
  const previous = runState.nodes.get(runState.open);
  runState.open = id;
  if (previous) previous.g.classList.remove('selected');
  const node = runState.nodes.get(id);
  if (node) node.g.classList.add('selected');
  setHash('step', id);
  panel.hidden = false;
  if (archived) { panel.replaceChildren(el('p', { class: 'muted' }, 'Step details are shown for live runs (restore this one to see them).')); return; }
  if (!quiet) panel.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  let p;
  try {
    p = await api(`${runApi(workflow, runId)}/steps/${enc(id)}`);
  } catch (e) {
    panel.replaceChildren(...errorView(e, workflow));
    return;
  }
  const section = (title, ...content) => [el('h3', {}, title), ...content];
  const parts = [
    el('h2', { id: 'panel-title' }, `${SYMBOL[p.status] || ''} ${p.id} `, badge(p.status)),
    el('dl', { class: 'kv' },
      p.uses && !p.call ? [el('dt', {}, 'uses'), el('dd', { class: 'mono', id: 'panel-uses' }, p.uses)] : [el('dt', {}, 'call'), el('dd', { class: 'mono' }, p.call)],
      el('dt', {}, 'why'), el('dd', { id: 'panel-why' }, p.why || ''),
      p.deps.length ? [el('dt', {}, 'waits for'), el('dd', {}, p.deps.map((d) => p.inferred_deps.includes(d) ? `${d} (read)` : d).join(', '))] : [],
      p.when ? [el('dt', {}, 'when'), el('dd', { class: 'mono' }, p.when)] : [],
      p.foreach ? [el('dt', {}, 'foreach'), el('dd', { class: 'mono' }, p.foreach)] : [],
      p.capture_as ? [el('dt', {}, 'captures'), el('dd', { class: 'mono' }, p.capture_as)] : [],
      p.attempts ? [el('dt', {}, 'refused'), el('dd', {}, String(p.attempts))] : [],
      timingText(p.timing) ? [el('dt', {}, 'time'), el('dd', { id: 'panel-time' }, timingText(p.timing))] : []),
  ];
  if (p.instruction) parts.push(...section('Instruction (rendered)', el('pre', { id: 'panel-instruction' }, json(p.instruction))));
  else if (p.input !== undefined && p.input !== null) parts.push(...section('Input (rendered)', el('pre', {}, json(p.input))));
  if (p.waiting && p.waiting.length) parts.push(...section('Waiting', p.waiting.map((w) => waitPanel(w, workflow, runId))));
  if (p.result !== undefined && p.result !== null) parts.push(...section('Result', el('pre', { id: 'panel-result' }, json(p.result))));
  if (Object.keys(p.captures).length) parts.push(...section('Captures set', el('pre', {}, json(p.captures))));
  // A `uses:` step's child runs, by item.
  const childOf = new Map((p.children || []).map((c) => [c.step_id, c]));
  const childLink = (c) => el('a', { class: 'child-run-link', href: runHref(c.workflow, c.run_id) }, `${c.run_id}`);
  if (p.items) {
    parts.push(...section(`Items (${p.items.length})`, el('table', { id: 'panel-items' }, p.items.map((it, i) => {
      const c = childOf.get(`${p.id}[${i}]`);
      return el('tr', {}, el('td', {}, `[${i}]`), el('td', {}, badge(it.status)),
        el('td', { class: 'item-input' }, el('code', {}, it.input === undefined || it.input === null ? '' : cut(JSON.stringify(it.input), 80))),
        el('td', {}, el('code', {}, it.result === undefined || it.result === null ? '' : cut(JSON.stringify(it.result), 120))),
        el('td', {}, c ? [childLink(c), ' ', badge(c.status)] : ''));
    }))));
  } else if (p.children && p.children.length) {
    parts.push(...section('Child run', el('div', { id: 'panel-child' }, p.children.map((c) => [childLink(c), ' ', badge(c.status)]))));
  }
  if (p.events.length) {
    parts.push(...section('Attempts', el('ul', { id: 'panel-events' }, p.events.map((ev) => el('li', { class: ev.kind },
      `${ev.kind === 'result' ? 'accepted' : 'refused'} ${ev.step_id} · v${ev.version} · ${ev.at}`,
      ev.errors ? el('ul', {}, (Array.isArray(ev.errors) ? ev.errors : [ev.errors]).map((er) => el('li', { class: 'validation-error' }, el('code', {}, er.path || '/'), ' ', er.message || JSON.stringify(er)))) : null,
      ev.truncated ? el('div', { class: 'muted' }, `cut: ${JSON.stringify(ev.truncated)}`) : null)))));
  }
  parts.push(...section('YAML', codeView(p.yaml.text, p.yaml.first_line, p.yaml.diagnostics), diagList(p.yaml.diagnostics)));
  panel.replaceChildren(...parts);
}

function timingText(t) {
  const has = (v) => v !== null && v !== undefined;
  if (has(t.from_ms) && has(t.to_ms)) return `${t.to_ms - t.from_ms} ms from ready to result (at +${t.to_ms} ms)`;
  if (has(t.from_ms)) return `could start at +${t.from_ms} ms`;
  return '';
}

// ---- waits: a question and its form, a timer, an event --------------------------

/** When `at` (RFC 3339) is: the local time, and how far off. */
function deadlineText(at) {
  const d = new Date(at);
  if (isNaN(d)) return at;
  const s = Math.round((d - Date.now()) / 1000);
  const far = Math.abs(s) < 60 ? `${Math.abs(s)}s` : Math.abs(s) < 3600 ? `${Math.floor(Math.abs(s) / 60)}m` : Math.abs(s) < 86400 ? `${Math.floor(Math.abs(s) / 3600)}h ${Math.floor((Math.abs(s) % 3600) / 60)}m` : `${Math.floor(Math.abs(s) / 86400)}d`;
  return `${d.toLocaleString()} (${s >= 0 ? `in ${far}` : `${far} ago`})`;
}

/** One line for a wait: what it waits for and until when. */
function waitText(w) {
  const until = w.deadline ? deadlineText(w.deadline) : null;
  if (w.wait === 'timer') return `${w.step_id}: a timer, fires at ${until || '?'}`;
  if (w.wait === 'event') return `${w.step_id}: event ${w.event}${w.key ? ` (key ${w.key})` : ''}${until ? `, times out at ${until}` : ''}`;
  return `${w.step_id}: asks “${w.ask || ''}”${until ? `, times out at ${until}` : ''}`;
}

/** A step's wait in its panel: the question and, for a person, a form built from its schema. */
function waitPanel(w, workflow, runId) {
  const box = el('div', { class: 'box wait', 'data-wait': w.wait, 'data-step-id': w.step_id });
  if (w.wait === 'answer') box.append(el('div', { class: 'wait-ask' }, el('strong', {}, w.ask || '(no question)')));
  else if (w.wait === 'event') box.append(el('div', {}, 'Waits for the event ', el('code', {}, w.event || ''), w.key ? [' with key ', el('code', {}, w.key)] : ''));
  else box.append(el('div', {}, 'A timer.'));
  if (w.deadline) box.append(el('div', { class: 'wait-deadline' }, w.wait === 'timer' ? 'Fires at ' : 'Times out at ', deadlineText(w.deadline)));
  if (w.wait !== 'answer') { box.append(el('div', { class: 'muted' }, w.how)); return box; }
  if (!session.can_act) { box.append(el('div', { class: 'muted' }, w.how)); return box; }
  box.append(answerForm(w, workflow, runId));
  return box;
}

/** A field for one property of a flat object schema, or null when the schema is not one. */
function fieldFor(name, prop, required) {
  const label = (input) => el('label', { class: 'field' }, el('span', {}, `${name}${required ? ' *' : ''}`), input,
    prop.description ? el('span', { class: 'muted' }, ` ${prop.description}`) : null);
  if (Array.isArray(prop.enum)) {
    const select = el('select', { name }, required ? null : el('option', { value: '' }, '(none)'), prop.enum.map((v, i) => el('option', { value: String(i) }, String(v))));
    return { node: label(select), read: () => (select.value === '' ? undefined : prop.enum[Number(select.value)]) };
  }
  if (prop.type === 'boolean') {
    const box = el('input', { type: 'checkbox', name });
    return { node: label(box), read: () => box.checked };
  }
  if (prop.type === 'integer' || prop.type === 'number') {
    const input = el('input', { type: 'text', inputmode: 'decimal', name });
    return { node: label(input), read: () => { const v = input.value.trim(); return v === '' ? undefined : isNaN(Number(v)) ? v : Number(v); } };
  }
  if (prop.type === 'string' || prop.type === undefined) {
    const input = el('input', { type: 'text', name });
    return { node: label(input), read: () => (input.value === '' ? undefined : input.value) };
  }
  return null;
}

function answerForm(w, workflow, runId) {
  const s = w.schema && typeof w.schema === 'object' ? w.schema : null;
  const props = s && s.type === 'object' && s.properties && typeof s.properties === 'object' ? s.properties : null;
  const required = new Set((s && s.required) || []);
  let fields = props ? Object.entries(props).map(([k, p]) => [k, fieldFor(k, p || {}, required.has(k))]) : null;
  if (fields && fields.some(([, f]) => !f)) fields = null;
  const raw = fields ? null : el('textarea', { name: 'value', rows: 4, 'aria-label': 'answer as JSON', placeholder: 'the answer as JSON' });
  const errors = el('ul', { class: 'answer-errors' });
  const form = el('form', { class: 'answer-form' });
  form.append(...(fields ? fields.map(([, f]) => f.node) : [raw]), errors, el('button', { type: 'submit' }, 'Answer'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let value;
    if (fields) {
      value = {};
      for (const [k, f] of fields) { const v = f.read(); if (v !== undefined) value[k] = v; }
    } else {
      try { value = JSON.parse(raw.value); } catch (e) { errors.replaceChildren(el('li', { class: 'validation-error' }, `not JSON: ${e.message}`)); return; }
    }
    try {
      await api(`${runApi(workflow, runId)}/actions/answer`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Savant-Csrf': session.csrf }, body: JSON.stringify({ step_id: w.step_id, value }),
      });
      location.reload();
    } catch (e) {
      const b = e.body || {};
      const list = Array.isArray(b.details) ? b.details : [{ path: '', message: b.message || e.message }];
      errors.replaceChildren(...list.map((f) => el('li', { class: 'validation-error' }, b.error ? `${b.error} ` : '', el('code', {}, f.path || '/'), ' ', f.message || '')));
    }
  });
  return form;
}

// ---- source with diagnostics ----------------------------------------------------

function codeView(text, firstLine, diagnostics) {
  const byLine = new Map();
  for (const d of diagnostics) for (let l = d.line; l <= d.end_line; l++) {
    if (!byLine.has(l)) byLine.set(l, []);
    byLine.get(l).push(d);
  }
  const lines = text.split('\n').map((line, i) => {
    const n = firstLine + i;
    const chars = Array.from(line);
    const code = el('span', { class: 'src' });
    const marks = byLine.get(n) || [];
    if (!marks.length) code.append(line || ' ');
    else {
      const d = marks[0];
      const from = d.line === n ? d.column - 1 : 0;
      const to = d.end_line === n ? Math.max(d.end_column - 1, from + 1) : chars.length;
      code.append(chars.slice(0, from).join(''),
        el('span', { class: `diag-${d.severity}`, title: `${d.code}: ${d.message}` }, chars.slice(from, to).join('') || ' '),
        chars.slice(to).join(''));
    }
    return el('div', { class: 'line' }, el('span', { class: 'ln' }, String(n)), code);
  });
  return el('div', { class: 'code mono' }, lines);
}

function diagList(diagnostics) {
  if (!diagnostics.length) return el('p', { class: 'muted' }, 'check: no problems here.');
  return el('ul', { class: 'diags' }, diagnostics.map((d) => el('li', {},
    el('span', { class: `badge ${d.severity === 'error' ? 'failed' : 'ready'}` }, d.severity), ' ',
    el('span', { class: 'code-name' }, d.code), ` ${d.line}:${d.column} ${d.message}`, d.help ? el('div', { class: 'muted' }, `help: ${d.help}`) : null)));
}

function sourceView(s) {
  const parts = [el('p', { class: 'muted' }, s.path)];
  if (s.differs && s.diff) {
    parts.push(el('div', { class: 'box warn' }, 'The file on disk differs from this pinned version. Diff to the file on disk:'), el('pre', { id: 'diff' }, s.diff));
    if (s.current_diagnostics) parts.push(el('h3', {}, 'check on the file on disk'), diagList(s.current_diagnostics));
  }
  if (s.current_error) parts.push(el('div', { class: 'box error' }, 'The file on disk cannot be read: ', s.current_error.details && s.current_error.details.message || ''));
  parts.push(el('h3', {}, 'check'), diagList(s.diagnostics), codeView(s.text, 1, s.diagnostics));
  return parts;
}

async function loadSource(box, workflow, runId) {
  if (box.childElementCount) return;
  box.replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
  try {
    box.replaceChildren(...sourceView(await api(`${runApi(workflow, runId)}/source`)));
  } catch (e) {
    box.replaceChildren(...errorView(e, workflow));
  }
}

// ---- the timeline ---------------------------------------------------------------

function drawTimeline(box, t) {
  const span = Math.max(t.span_ms, 1);
  const pct = (ms) => `${(100 * ms) / span}%`;
  const rows = t.rows.map((r) => {
    const track = el('div', { class: 'track' });
    if (r.from_ms !== null && r.from_ms !== undefined && r.to_ms !== null && r.to_ms !== undefined) {
      track.append(el('div', { class: 'bar', 'data-from': r.from_ms, 'data-to': r.to_ms }));
    }
    for (const ev of r.events) track.append(el('div', { class: `mark ${ev.kind}`, 'data-at': ev.at_ms, title: `${ev.step_id} ${ev.kind} v${ev.version} +${ev.at_ms} ms` }));
    return el('div', { class: 'row' }, el('div', { class: 'label', title: r.step }, r.step), track);
  });
  box.replaceChildren(el('p', { class: 'muted' }, `from ${t.start} · ${t.span_ms} ms in all`), el('div', { class: 'timeline' }, rows));
  // Positions through the CSSOM (the page's policy allows no inline style attribute).
  for (const bar of box.querySelectorAll('.bar')) {
    bar.style.left = pct(Number(bar.dataset.from));
    bar.style.width = pct(Number(bar.dataset.to) - Number(bar.dataset.from));
  }
  for (const mark of box.querySelectorAll('.mark')) mark.style.left = pct(Number(mark.dataset.at));
}

// ---- actions ---------------------------------------------------------------------

function actions(view, archiveId) {
  if (!session.can_act) return el('div', { class: 'muted', id: 'actions' }, session.read_only ? 'read-only: no actions' : 'actions need a token (see docs/inspector.md)');
  const act = async (action, body, confirmText) => {
    if (confirmText && !window.confirm(confirmText)) return null;
    try {
      const r = await api(`${runApi(view.workflow, view.run_id)}/actions/${action}`, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Savant-Csrf': session.csrf }, body: JSON.stringify(body),
      });
      return r.result;
    } catch (e) {
      notice('error', ...errorView(e, view.workflow).slice(0, 1));
      return null;
    }
  };
  if (view.archived) {
    return el('div', { class: 'actions', id: 'actions' }, el('button', { type: 'button', onclick: async () => {
      if (await act('restore', { archive_id: archiveId }, 'Make this archived copy the live run again?')) location.href = runHref(view.workflow, view.run_id);
    } }, 'Restore'));
  }
  const steps = view.graph.nodes.map((n) => n.id);
  const checkpoint = el('select', { 'aria-label': 'checkpoint' }, el('option', { value: '' }, '(the start)'), [...new Set(view.checkpoints)].map((c) => el('option', { value: c }, c)));
  const force = el('input', { type: 'checkbox' });
  const from = el('select', { 'aria-label': 'fork from' }, steps.map((s) => el('option', { value: s }, s)));
  return el('div', { class: 'actions', id: 'actions' },
    'Reset to ', checkpoint, el('label', {}, force, ' discard results'),
    el('button', { type: 'button', onclick: async () => {
      const r = await act('reset', { checkpoint: checkpoint.value || null, force: force.checked }, `Reset ${view.run_id} to ${checkpoint.value || 'the start'}?`);
      if (r) location.reload();
    } }, 'Reset'),
    ' · Fork from ', from,
    el('button', { type: 'button', onclick: async () => {
      const r = await act('fork', { from: from.value });
      if (r) location.href = runHref(view.workflow, r.run_id);
    } }, 'Fork'),
    ' · ',
    el('button', { type: 'button', onclick: async () => {
      const r = await act('upgrade', { dry_run: true });
      if (!r) return;
      notice('warn', el('div', {}, 'Upgrade dry run:'), el('pre', {}, json(r)),
        el('button', { type: 'button', onclick: async () => { if (await act('upgrade', { dry_run: false })) location.reload(); } }, 'Apply the upgrade'));
    } }, 'Upgrade…'),
    el('button', { type: 'button', onclick: async () => { if (await act('archive', {}, `Archive ${view.run_id}? (state restore brings it back)`)) location.href = '/ui/'; } }, 'Archive'),
    el('button', { type: 'button', class: 'danger', onclick: async () => { if (await act('delete', {}, `Delete ${view.run_id} for good? This cannot be undone.`)) location.href = '/ui/'; } }, 'Delete'));
}

// ---- a workflow without a run ------------------------------------------------------

async function workflowPage(workflow) {
  crumbs(el('a', { href: '/ui/' }, 'runs'), workflow);
  let data;
  try {
    data = await api(`/ui/api/workflows/${enc(workflow)}`);
  } catch (e) {
    main().replaceChildren(el('h1', {}, workflow), ...errorView(e, workflow));
    return;
  }
  const graph = el('div', { class: 'graph', id: 'graph' });
  main().replaceChildren(
    el('h1', {}, workflow), el('p', {}, el('a', { href: `/ui/?workflow=${enc(workflow)}` }, 'its runs')),
    data.error ? el('div', { class: 'box error' }, `${data.error.error}: `, data.error.details && data.error.details.message || '') : null,
    graph, el('h2', {}, 'Source'), ...sourceView(data.source));
  if (data.graph) drawGraph(graph, data.graph, () => {});
  else graph.remove();
}

// ---- start -----------------------------------------------------------------------

async function start() {
  try {
    session = await api('/ui/api/session');
    document.getElementById('mode').textContent = session.can_act ? 'actions on' : session.read_only ? 'read-only' : 'read-only (no token)';
  } catch (e) {
    main().replaceChildren(...errorView(e, ''));
    return;
  }
  const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[1] === 'runs' && parts.length === 4) await runPage(parts[2], parts[3]);
  else if (parts[1] === 'workflows' && parts.length === 3) await workflowPage(parts[2]);
  else await runsPage();
  document.body.dataset.ready = '1';
}

start();
