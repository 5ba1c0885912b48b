'use strict';
// vin-inspect report: draws the data block (report_page.cpp) as an icicle or a treemap of the
// module tree. Names reach the DOM only as textContent or a box's data-path (contract 13.2).
(() => {
const D = JSON.parse(document.getElementById('vin-data').textContent);
const $ = (id) => document.getElementById(id);
const NS = 'http://www.w3.org/2000/svg';
const NODES = D.nodes, N = NODES.length, CMP = D.compare, NEW = D.sides.length - 1;
const MAX_BOXES = 3000, MIN_W = 3, MIN_AREA = 40, ROW = 22, MAX_ROWS = 500;
const CHANGE = { g: 'grew', s: 'shrank', '=': 'same', a: 'added', r: 'removed' };
const METRIC = new Map(D.metrics.map((m) => [m.name, m]));
const metric = (m = S.metric) => METRIC.get(m);
// names among other text, isolated for bidirectional text (FSI ... PDI)
const iso = (name) => '\u2068' + name + '\u2069';
const path = (i) => NODES[i][0];
const parentOf = (i) => NODES[i][1];
const kids = Array.from({ length: N }, () => []);
const depth = new Int32Array(N);
const byPath = new Map();
for (let i = 0; i < N; i++) {
  byPath.set(path(i), i);
  if (i) { kids[parentOf(i)].push(i); depth[i] = depth[parentOf(i)] + 1; }
}
const ROOT_PATH = path(0);
const DEF = { view: 'icicle', metric: D.metric, focus: ROOT_PATH, q: '', size: 'new' };
const S = Object.assign({}, DEF);
let focus = 0, group = null, matched = new Uint8Array(N), boxes = [], sel = -1;
const gOf = [];

// ---- values
const side = () => (CMP && S.size === 'old' ? 0 : NEW);
const total = (i, s = side(), m = S.metric) => D.values[m][s].total[i];
const selfOf = (i, s = side(), m = S.metric) => D.values[m][s].self[i];
const size = (i) => Math.max(0, total(i) || 0);
const changeOf = (i) => (CMP ? CHANGE[D.changes[S.metric].node[i]] : null);
const selfChangeOf = (i) => (CMP ? CHANGE[D.changes[S.metric].self[i]] : null);
const nameOf = (i) => (i ? path(i).slice(parentOf(i) ? path(parentOf(i)).length + 1 : 0) : ROOT_PATH);
const kindOf = (i) => (NODES[i][2] ? 'container' : 'module');
const typeOf = (i) => (NODES[i][3] == null ? '' : D.types[NODES[i][3]]);

function fmt(v, m = S.metric) {
  if (v == null) return '-';
  const unit = metric(m).unit;
  if (unit === 'ms') {
    const a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) + ' ms' : a >= 1 ? v.toFixed(2) + ' ms' : (v * 1000).toFixed(a >= 0.01 ? 1 : 2) + ' us';
  }
  const bytes = unit === 'bytes', k = bytes ? 1024 : 1000;
  const sfx = bytes ? [' B', ' KiB', ' MiB', ' GiB', ' TiB', ' PiB'] : ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
  let x = Math.abs(v), e = 0;
  while (x >= k && e < sfx.length - 1) { x /= k; e++; }
  return (v < 0 ? '-' : '') + (e ? x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0) : String(Math.round(x))) + sfx[e];
}
// a change as text with an ASCII sign: +100%, -50%, +2.1%
function pct(a, b) {
  if (a == null || b == null) return '';
  if (a === 0) return b === 0 ? '0%' : (b > 0 ? '+' : '-') + 'inf%';
  const p = ((b - a) / Math.abs(a)) * 100, x = Math.abs(p);
  let t = x >= 9.95 || Number.isInteger(x) ? String(Math.round(x)) : x.toFixed(1);
  if (t === '0.0') t = '0';
  return (t === '0' ? '' : p > 0 ? '+' : '-') + t + '%';
}
function changeText(i, c) {
  if (c === 'added' || c === 'removed') return c;
  return pct(total(i, 0), total(i, NEW));
}

// ---- search: a substring, or a pattern as fnmatch.fnmatchcase reads it (`*` matches dots too)
function pattern(p) {
  const outside = (c) => (/[\^$\\.*+?()[\]{}|/]/.test(c) ? '\\' + c : c);
  const inside = (c) => (/[\^\\\]\[-]/.test(c) ? '\\' + c : c);
  const cs = Array.from(p);
  let re = '';
  for (let i = 0; i < cs.length;) {
    const c = cs[i++];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      let j = i;
      if (cs[j] === '!') j++;
      if (cs[j] === ']') j++;
      while (j < cs.length && cs[j] !== ']') j++;
      if (j >= cs.length) { re += '\\['; continue; }
      let k = i, set = '';
      const negated = cs[k] === '!';
      if (negated) k++;
      while (k < j) {  // a range whose ends are out of order matches nothing, as in fnmatch
        if (k + 2 < j && cs[k + 1] === '-') {
          if (cs[k].codePointAt(0) <= cs[k + 2].codePointAt(0)) set += inside(cs[k]) + '-' + inside(cs[k + 2]);
          k += 3;
        } else set += inside(cs[k++]);
      }
      i = j + 1;
      re += set ? '[' + (negated ? '^' : '') + set + ']' : negated ? '.' : '(?!)';
    } else re += outside(c);
  }
  try { const r = new RegExp('^(?:' + re + ')$', 'su'); return (s) => r.test(s); } catch (e) { return () => false; }
}
function search() {
  matched = new Uint8Array(N);
  const q = S.q, out = $('vin-search-summary');
  if (!q) { out.textContent = ''; return; }
  const test = /[*?[]/.test(q) ? pattern(q) : (s) => s.includes(q);
  let n = 0, covered = 0;
  for (let i = 0; i < N; i++) if (test(path(i))) { matched[i] = 1; n++; }
  for (let i = 0; i < N; i++) {
    if (!matched[i]) continue;
    let a = parentOf(i), inside = false;
    while (a >= 0 && !inside) { inside = matched[a] === 1; a = parentOf(a); }
    if (!inside) covered += size(i);
  }
  const whole = size(0), share = whole > 0 ? (100 * covered) / whole : 0;
  out.textContent = n + (n === 1 ? ' module matches, ' : ' modules match, ') + share.toFixed(2) + '% of ' + metric().label;
}

// ---- the boxes of a frame: a node's parts are its children (scaled to fit where they sum past
// it), its uncovered "(self)" part, and one "N smaller modules" box for those too small to draw
// children summing past their parent by more than the rounding of six significant digits
const past = (sum, v) => sum > v * (1 + 1e-5) && sum > 0;
// one box for the parts of `i` in `list`, in place of them all
function merged(i, list) {
  const members = [];
  list.forEach((p) => { if (p.kind === 'more') members.push(...p.members); else if (p.kind !== 'self') members.push(p.i); });
  return { kind: 'more', i, v: list.reduce((a, p) => a + p.v, 0), t: list.reduce((a, p) => a + p.t, 0), n: members.length, members };
}
function parts(i, room) {
  if (!kids[i].length) return [];
  const v = size(i), list = [];
  let sum = 0;
  const children = i === focus && group ? group : kids[i];
  for (const c of children) { const cv = size(c); if (cv > 0) { list.push({ kind: kindOf(c), i: c, v: cv, t: cv }); sum += cv; } }
  const own = i === focus && group ? 0 : Math.max(0, selfOf(i) || 0);
  const scale = past(sum, v) ? v / sum : 1;
  list.forEach((p) => { p.v *= scale; });
  if (own > 0 && scale === 1) list.push({ kind: 'self', i, v: own, t: own });
  const whole = list.reduce((a, p) => a + p.v, 0);
  if (!(whole > 0)) return [];
  const big = [], small = [];
  list.forEach((p) => ((p.v / whole) * room < MIN_W ? small : big).push(p));
  if (small.filter((p) => p.kind !== 'self').length > 1) big.push(merged(i, small));
  else big.push(...small);
  return big;
}
// the parts that fit in what is left of a frame's boxes, the rest merged into one
function fit(i, ps, used) {
  const room = MAX_BOXES - used;
  if (ps.length <= room) return ps;
  if (room < 1) return [];
  return ps.slice(0, room - 1).concat([merged(i, ps.slice(room - 1))]);
}

function icicle(W) {
  const out = [{ kind: kindOf(focus), i: focus, v: size(focus), t: size(focus), x: 0, y: 0, w: W, h: ROW }];
  for (let k = 0; k < out.length && out.length < MAX_BOXES; k++) {
    const b = out[k];
    if (b.kind !== 'module' && b.kind !== 'container') continue;
    if (b.y / ROW >= MAX_ROWS) continue;
    const ps = fit(b.i, parts(b.i, b.w), out.length);
    const whole = ps.reduce((a, p) => a + p.v, 0);
    let x = b.x;
    for (const p of ps) {
      const w = (p.v / whole) * b.w;
      if (w >= 0.5 && out.length < MAX_BOXES) out.push(Object.assign(p, { x, y: b.y + ROW, w, h: ROW }));
      x += w;
    }
  }
  return out;
}

function squarify(items, x, y, w, h, out) {
  const whole = items.reduce((a, p) => a + p.v, 0);
  if (!(whole > 0)) return;
  const scale = (w * h) / whole;
  const worst = (row, side) => {
    let s = 0, hi = 0, lo = Infinity;
    for (const p of row) { const a = p.v * scale; s += a; hi = Math.max(hi, a); lo = Math.min(lo, a); }
    return Math.max((side * side * hi) / (s * s), (s * s) / (side * side * lo));
  };
  const place = (row) => {
    const s = row.reduce((a, p) => a + p.v * scale, 0);
    if (w >= h) {
      const cw = s / h; let cy = y;
      for (const p of row) { const ph = (p.v * scale) / cw; out.push(Object.assign(p, { x, y: cy, w: cw, h: ph })); cy += ph; }
      x += cw; w -= cw;
    } else {
      const rh = s / w; let cx = x;
      for (const p of row) { const pw = (p.v * scale) / rh; out.push(Object.assign(p, { x: cx, y, w: pw, h: rh })); cx += pw; }
      y += rh; h -= rh;
    }
  };
  let row = [];
  for (const p of items) {
    const side = Math.min(w, h);
    if (row.length && worst(row.concat([p]), side) > worst(row, side)) { place(row); row = []; }
    row.push(p);
  }
  if (row.length) place(row);
}

function treemap(W, H) {
  const out = [{ kind: kindOf(focus), i: focus, v: size(focus), t: size(focus), x: 0, y: 0, w: W, h: H }];
  for (let k = 0; k < out.length && out.length < MAX_BOXES; k++) {
    const b = out[k];
    if (b.kind !== 'module' && b.kind !== 'container') continue;
    const head = b.h > 40 && b.w > 40 ? 16 : 0;
    const x = b.x + 2, y = b.y + head + 1, w = b.w - 4, h = b.h - head - 3;
    if (w < MIN_W || h < MIN_W) continue;
    const ps = fit(b.i, parts(b.i, Math.sqrt((w * h) / MIN_AREA) * MIN_W).sort((p, q) => q.v - p.v), out.length);
    const placed = [];
    squarify(ps, x, y, w, h, placed);
    for (const p of placed) if (p.w * p.h >= 2 && out.length < MAX_BOXES) out.push(p);
  }
  return out;
}

// ---- drawing
const svg = $('vin-chart');
const shownName = (i) => (i ? iso(nameOf(i) || '""') : ROOT_PATH);
function label(b) {
  const name = b.kind === 'self' ? '(self)' : b.kind === 'more' ? b.n + ' smaller modules' : shownName(b.i);
  const c = boxChange(b);
  let extra = '';
  if (CMP && b.kind === 'self') extra = ' ' + (c === 'added' || c === 'removed' ? c : pct(selfOf(b.i, 0), selfOf(b.i, NEW)));
  else if (CMP && b.kind !== 'more') extra = ' ' + changeText(b.i, c);
  return name + ' ' + fmt(b.t) + extra;
}
// a box's change: its node's, its (self) part's, or for merged modules that of the one that
// changed the most
function boxChange(b) {
  if (!CMP) return null;
  if (b.kind === 'self') return selfChangeOf(b.i);
  if (b.kind !== 'more') return changeOf(b.i);
  let best = null, most = -1;
  for (const m of b.members) {
    const d = Math.abs((total(m, NEW) || 0) - (total(m, 0) || 0));
    if (changeOf(m) !== 'same' && d > most) { most = d; best = changeOf(m); }
  }
  return best || 'same';
}
function draw() {
  const W = Math.max(320, $('vin-chart-box').clientWidth || 1000);
  boxes = S.view === 'treemap' ? treemap(W, Math.max(420, Math.round(W * 0.55))) : icicle(W);
  const H = S.view === 'treemap' ? boxes[0].h : boxes.reduce((a, b) => Math.max(a, b.y + b.h), ROW);
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  svg.setAttribute('height', String(H));
  svg.textContent = '';
  gOf.length = 0;
  tip(-1);
  const frag = document.createDocumentFragment();
  boxes.forEach((b, k) => {
    const g = document.createElementNS(NS, 'g');
    g.setAttribute('data-path', path(b.i));
    g.setAttribute('data-kind', b.kind);
    g.setAttribute('data-value', String(b.t));
    g.setAttribute('data-depth', String(depth[b.i] + (b.kind === 'self' || b.kind === 'more' ? 1 : 0)));
    const c = boxChange(b);
    if (CMP) g.setAttribute('data-change', c);
    if ((b.kind === 'module' || b.kind === 'container') && matched[b.i]) g.setAttribute('data-match', '1');
    g.setAttribute('class', (b.kind === 'module' ? '' : b.kind) + (CMP ? ' c-' + (c || 'same') : ''));
    const r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', b.x.toFixed(1)); r.setAttribute('y', b.y.toFixed(1));
    r.setAttribute('width', Math.max(0.5, b.w).toFixed(1)); r.setAttribute('height', Math.max(0.5, b.h).toFixed(1));
    if (!CMP && b.kind !== 'self' && b.kind !== 'more') r.setAttribute('fill', 'hsl(' + ((NODES[b.i][3] || 0) * 47 + depth[b.i] * 13) % 360 + ' 55% ' + (b.kind === 'container' ? 88 : 76) + '%)');
    g.appendChild(r);
    if (b.w > 36 && b.h > 12) {
      const t = document.createElementNS(NS, 'text');
      t.setAttribute('x', (b.x + 4).toFixed(1)); t.setAttribute('y', (b.y + 14).toFixed(1));
      const text = label(b), fit = Math.floor((b.w - 8) / 6.2);
      t.textContent = text.length > fit ? text.slice(0, Math.max(1, fit - 1)) + '\u2026' : text;
      g.appendChild(t);
    }
    gOf.push(g);
    frag.appendChild(g);
  });
  svg.appendChild(frag);
  sel = -1;
}

// ---- the tooltip: path, type, calls, total and self, shares of root and parent, shapes
function tip(k, x, y) {
  const el = $('vin-tip');
  if (k < 0) { el.hidden = true; return; }
  const b = boxes[k], i = b.i, lines = [];
  if (b.kind === 'more') lines.push(b.n + ' smaller modules under ' + iso(path(i)) + ': ' + fmt(b.t) + ' (click to open)');
  else {
    lines.push((b.kind === 'self' ? '(self) of ' : '') + iso(path(i)));
    if (typeOf(i)) lines.push(iso(typeOf(i)));
    if (b.kind === 'container') lines.push('container: no record of its own, the sum of its children');
    if (NODES[i][4] != null) lines.push('calls: ' + NODES[i][4]);
    const v = b.kind === 'self' ? selfOf(i) : total(i);
    lines.push(metric().label + ': total ' + fmt(total(i)) + ', self ' + fmt(kids[i].length ? selfOf(i) : total(i)));
    const root = size(0), up = b.kind === 'self' ? size(i) : i ? size(parentOf(i)) : 0;
    if (root > 0) lines.push('share of root ' + ((100 * (v || 0)) / root).toFixed(2) + '%' + (up > 0 ? ', of parent ' + ((100 * (v || 0)) / up).toFixed(2) + '%' : ''));
    if (NODES[i][5]) lines.push('shapes: ' + JSON.stringify(NODES[i][5]) + ' -> ' + JSON.stringify(NODES[i][6]));
    if (CMP) {
      const s = b.kind === 'self' ? selfOf : total, a = s(i, 0), c = s(i, NEW);
      const ch = b.kind === 'self' ? selfChangeOf(i) : changeOf(i);
      lines.push('old ' + fmt(a) + ', new ' + fmt(c) + ', change ' + (a != null && c != null ? fmt(c - a) + ' ' : '') + (ch === 'added' || ch === 'removed' ? ch : pct(a, c)) + ' (' + ch + ')');
    }
    const why = exceeds(i);
    if (why) lines.push(why);
  }
  el.textContent = lines.join('\n');
  el.hidden = false;
  const w = el.offsetWidth, h = el.offsetHeight;
  el.style.left = Math.max(4, Math.min(x + 14, innerWidth - w - 8)) + 'px';
  el.style.top = Math.max(4, y + 16 + h > innerHeight ? y - h - 10 : y + 16) + 'px';
}
function exceeds(i) {
  let sum = 0;
  for (const c of kids[i]) sum += size(c);
  return past(sum, size(i)) && size(i) > 0 ? 'its children add up to ' + fmt(sum) + ', more than its ' + fmt(size(i)) + ' (shared tensors or calls): drawn scaled to fit' : '';
}

// ---- the state, the URL fragment and the controls
function writeHash() {
  const parts = [];
  for (const k of ['view', 'metric', 'focus', 'q', 'size']) if (S[k] !== DEF[k]) parts.push(k + '=' + encodeURIComponent(S[k]));
  const h = parts.length ? '#' + parts.join('&') : '';
  if (location.hash !== h && !(h === '' && location.hash === '#')) history.replaceState(null, '', h || location.pathname + location.search);
}
function nearest(p) {
  for (;;) {
    if (byPath.has(p)) return byPath.get(p);
    const dot = p.lastIndexOf('.');
    if (p === ROOT_PATH || dot < 0) return 0;
    p = p.slice(0, dot);
  }
}
function readHash() {
  const got = new Map();
  for (const part of location.hash.slice(1).split('&')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    try { got.set(part.slice(0, eq), decodeURIComponent(part.slice(eq + 1))); } catch (e) { /* a broken escape: ignored */ }
  }
  S.view = got.get('view') === 'treemap' ? 'treemap' : 'icicle';
  S.metric = METRIC.has(got.get('metric')) ? got.get('metric') : DEF.metric;
  S.size = CMP && got.get('size') === 'old' ? 'old' : 'new';
  S.q = got.get('q') || '';
  focus = nearest(got.has('focus') ? got.get('focus') : ROOT_PATH);
  group = null;
  S.focus = path(focus);
}
function pressed() {
  document.querySelectorAll('button[data-view]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.view === S.view)));
  document.querySelectorAll('button[data-metric]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.metric === S.metric)));
  document.querySelectorAll('button[data-size]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.size === S.size)));
  const input = $('vin-search');
  if (input.value !== S.q) input.value = S.q;
}
function crumbs() {
  const nav = $('vin-crumbs'), chain = [];
  for (let i = focus; i >= 0; i = parentOf(i)) chain.unshift(i);
  nav.textContent = '';
  chain.forEach((i, k) => {
    if (k) { const s = document.createElement('span'); s.textContent = '.'; nav.appendChild(s); }
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'name';
    b.textContent = k ? nameOf(i) : ROOT_PATH;
    b.addEventListener('click', () => zoom(i));
    if (i === focus && !group) b.setAttribute('aria-current', 'location');
    nav.appendChild(b);
  });
  if (group) { const s = document.createElement('span'); s.textContent = ' > ' + group.length + ' smaller modules'; nav.appendChild(s); }
  $('vin-note').textContent = exceeds(focus) ? path(focus) + ': ' + exceeds(focus) : '';
}
function banners() {
  const env = D.environment_differs || [];
  const e = $('vin-banner-env');
  e.hidden = !env.length;
  e.textContent = env.length ? 'The two profiles were measured differently: ' + env.join(', ') + ' differ, so times and memory may differ for that reason.' : '';
  const f = $('vin-banner-flops'), missing = [];
  D.sides.forEach((s) => { if (s.header.flops_complete === false) (s.header.uncounted_operators || []).forEach((o) => missing.push(iso(o.name) + ' (' + o.calls + ' calls)')); });
  f.hidden = !(S.metric === 'flops' && missing.length);
  f.textContent = f.hidden ? '' : 'FLOPs are incomplete: no rule counts the work of ' + missing.join(', ') + '.';
}
function render() {
  S.focus = path(focus);
  search();
  draw();
  pressed();
  crumbs();
  banners();
  tables();
  writeHash();
}
function zoom(i) { focus = i; group = null; render(); }

// ---- tables: what changed, the modules (sortable), the top operators
function cell(tr, text, cls) { const td = document.createElement('td'); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td); return td; }
function head(table, names, sortable) {
  const tr = document.createElement('tr');
  names.forEach((n, k) => {
    const th = document.createElement('th');
    th.scope = 'col';
    if (!k || (sortable && k === 1)) th.className = 't';
    if (sortable) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = n;
      b.addEventListener('click', () => { sortBy = sortBy === k ? -k - 1 : k; tables(); });
      th.appendChild(b);
      if (Math.abs(sortBy + 0.5) - 0.5 === k) th.setAttribute('aria-sort', sortBy >= 0 ? 'descending' : 'ascending');
    } else th.textContent = n;
    tr.appendChild(th);
  });
  table.textContent = '';
  table.className = 'data';
  table.appendChild(tr);
}
function row(table, p) { const tr = document.createElement('tr'); if (p != null) tr.setAttribute('data-path', p); table.appendChild(tr); return tr; }
let sortBy = 3;
function tables() {
  const mods = [];
  for (let i = 0; i < N; i++) if (!NODES[i][2]) mods.push(i);
  const m = S.metric;
  if (CMP) {
    const counts = D.changes[m].counts;
    $('vin-changes-section').hidden = false;
    $('vin-change-counts').textContent = 'added ' + counts.added + ', removed ' + counts.removed + ', grew ' + counts.grew + ', shrank ' + counts.shrank + ', unchanged ' + counts.unchanged;
    const t = $('vin-changes');
    head(t, ['Module', 'Change', 'Old', 'New', 'Difference'], false);
    const delta = (i) => Math.abs((total(i, NEW) || 0) - (total(i, 0) || 0));
    mods.filter((i) => i && changeOf(i) !== 'same').sort((a, b) => delta(b) - delta(a) || depth[a] - depth[b] || a - b).slice(0, 100).forEach((i) => {
      const tr = row(t, path(i));
      const c = changeOf(i);
      cell(tr, path(i), 'name');
      cell(tr, changeText(i, c), c === 'grew' || c === 'added' ? 'up' : 'down');
      cell(tr, fmt(total(i, 0))); cell(tr, fmt(total(i, NEW)));
      const d = (total(i, NEW) || 0) - (total(i, 0) || 0);
      cell(tr, (d > 0 ? '+' : '') + fmt(d));
    });
  }
  const t = $('vin-modules');
  const names = ['Module', 'Type', 'Calls'].concat(CMP ? ['Old ' + metric(m).label, 'New ' + metric(m).label, 'Change'] : D.metrics.map((x) => x.label));
  const key = (i, k) => {
    if (k === 0) return path(i);
    if (k === 1) return typeOf(i);
    if (k === 2) return NODES[i][4] || 0;
    if (CMP) return k === 3 ? total(i, 0) || 0 : k === 4 ? total(i, NEW) || 0 : (total(i, NEW) || 0) - (total(i, 0) || 0);
    return total(i, NEW, D.metrics[k - 3].name) || 0;
  };
  if (sortBy >= names.length || -sortBy - 1 >= names.length) sortBy = 3;
  head(t, names, true);
  const k = sortBy >= 0 ? sortBy : -sortBy - 1, dir = sortBy >= 0 ? -1 : 1;
  mods.sort((a, b) => { const x = key(a, k), y = key(b, k); return (x < y ? -dir : x > y ? dir : 0) || a - b; });
  const shown = mods.slice(0, 500);
  shown.forEach((i) => {
    const tr = row(t, path(i));
    cell(tr, path(i), 'name');
    cell(tr, typeOf(i), 't name');
    cell(tr, NODES[i][4] == null ? '-' : String(NODES[i][4]));
    if (CMP) { cell(tr, fmt(total(i, 0))); cell(tr, fmt(total(i, NEW))); cell(tr, changeText(i, changeOf(i))); } else D.metrics.forEach((x) => cell(tr, fmt(total(i, NEW, x.name), x.name)));
  });
  $('vin-modules-more').textContent = mods.length > shown.length ? mods.length - shown.length + ' more modules: sort by another column to see them' : '';
  const ops = D.sides[NEW].operators, o = $('vin-operators');
  $('vin-operators-section').hidden = !ops.length;
  if (ops.length) {
    const old = new Map(CMP ? D.sides[0].operators.map((r) => [r[0], r]) : []);
    head(o, ['Operator', 'Calls', 'FLOPs', 'Time', 'Self time'].concat(CMP ? ['Old time', 'Change'] : []), false);
    ops.slice(0, 30).forEach((r) => {
      const tr = row(o, null);
      cell(tr, r[0], 'name'); cell(tr, String(r[1])); cell(tr, fmt(r[2], 'flops')); cell(tr, fmt(r[4], 'time')); cell(tr, fmt(r[5], 'time'));
      if (CMP) { const a = old.get(r[0]); cell(tr, a ? fmt(a[4], 'time') : 'added'); cell(tr, a ? pct(a[4], r[4]) : ''); }
    });
  }
}

// ---- header
function facts() {
  const t = $('vin-facts'), rows = [];
  const h = D.sides.map((s) => s.header);
  const pick = (f) => h.map(f);
  const add = (name, f) => { const v = pick(f); if (v.some((x) => x != null && x !== '')) rows.push([name, v]); };
  add('File', (x, k) => D.sides[k].source);
  if (D.kind === 'profile') {
    add('Device', (x) => x.device + (x.device_name ? ' (' + x.device_name + ')' : ''));
    add('Threads', (x) => x.threads && 'intra-op ' + x.threads.intra_op + ', inter-op ' + x.threads.inter_op);
    add('Mode', (x) => x.mode + (x.runner ? ', ' + x.runner : ''));
    add('Versions', (x) => 'LibTorch ' + x.torch_version + ', vin-inspect ' + x.vin_inspect_version);
    add('Latency (median)', (x) => x.latency_ms && fmt(x.latency_ms.median, 'time'));
    add('Instrumented forward', (x) => x.instrumented_ms != null && fmt(x.instrumented_ms, 'time'));
    add('FLOPs / MACs', (x) => fmt(x.flops, 'flops') + ' / ' + fmt(x.macs, 'flops') + (x.flops_complete === false ? ' (incomplete)' : ''));
    add('Parameters', (x, k) => fmt(total(0, k, 'parameters'), 'parameters') + ' (' + fmt(x.parameter_bytes, 'memory') + '; buffers ' + fmt(x.buffer_bytes, 'memory') + ')');
    add('Peak bytes', (x) => x.peak_bytes != null && fmt(x.peak_bytes, 'memory'));
  } else {
    add('Model', (x) => x.model_type);
    add('Parameters', (x, k) => fmt(total(0, k, 'parameters'), 'parameters') + (x.trainable_parameters != null ? ' (' + x.trainable_parameters + ' trainable)' : ''));
  }
  t.textContent = '';
  if (CMP) { const tr = document.createElement('tr'); ['', 'Old', 'New'].forEach((x) => { const th = document.createElement('th'); th.textContent = x; tr.appendChild(th); }); t.appendChild(tr); }
  rows.forEach(([name, v]) => {
    const tr = document.createElement('tr'), th = document.createElement('th');
    th.scope = 'row'; th.textContent = name; tr.appendChild(th);
    v.forEach((x) => cell(tr, x == null || x === false ? '-' : String(x), 'name'));
    t.appendChild(tr);
  });
}

// ---- events
function boxAt(target) { const g = target && target.closest ? target.closest('g') : null; return g ? gOf.indexOf(g) : -1; }
function open(k) {
  const b = boxes[k];
  if (!b) return;
  if (b.kind === 'more') {
    // the merged modules of the focus drawn alone, across the whole frame (Escape leaves them)
    if (b.i === focus) { group = b.members; render(); return; }
    return zoom(b.i);
  }
  zoom(b.i);
}
function select(k) {
  if (sel >= 0 && gOf[sel]) gOf[sel].classList.remove('sel');
  sel = k;
  if (k < 0) return tip(-1);
  gOf[k].classList.add('sel');
  const r = gOf[k].getBoundingClientRect();
  tip(k, r.left + Math.min(r.width, 40), r.top);
}
function move(key) {
  if (sel < 0) return select(0);
  const b = boxes[sel];
  // a self or more box stands under its module: its node is that module
  const below = (c) => (c.kind === 'self' || c.kind === 'more' ? c.i : parentOf(c.i));
  const under = (p) => boxes.findIndex((c, k) => k && below(c) === p);
  const level = boxes.map((c, k) => k).filter((k) => (S.view === 'icicle' ? boxes[k].y === b.y : below(boxes[k]) === below(b)));
  if (key === 'ArrowUp') { const p = boxes.findIndex((c) => c.i === below(b) && (c.kind === 'module' || c.kind === 'container')); if (p >= 0) select(p); }
  else if (key === 'ArrowDown') { if (b.kind === 'module' || b.kind === 'container') { const c = under(b.i); if (c >= 0) select(c); } }
  else { const at = level.indexOf(sel), to = level[at + (key === 'ArrowRight' ? 1 : -1)]; if (to != null) select(to); }
}
svg.addEventListener('mousemove', (e) => tip(boxAt(e.target), e.clientX, e.clientY));
svg.addEventListener('mouseleave', () => tip(-1));
svg.addEventListener('click', (e) => { const k = boxAt(e.target); if (k >= 0) open(k); });
document.addEventListener('keydown', (e) => {
  const typing = e.target && e.target.tagName === 'INPUT';
  if (e.key === '/' && !typing) { e.preventDefault(); $('vin-search').focus(); return; }
  if (e.key === 'Escape') {
    if (typing) { e.target.blur(); return; }
    if (group) { group = null; render(); } else if (focus) zoom(parentOf(focus));
    return;
  }
  // Enter and the arrows belong to the chart (a focused button keeps its Enter, the page its arrows)
  if (e.target !== svg || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.key === 'Enter' && sel >= 0) { e.preventDefault(); open(sel); }
  else if (e.key.startsWith('Arrow')) { e.preventDefault(); move(e.key); }
});
// a module's row zooms the chart to it
['vin-modules', 'vin-changes'].forEach((id) => $(id).addEventListener('click', (e) => {
  const tr = e.target.closest('tr[data-path]');
  if (tr && !e.target.closest('th')) { zoom(byPath.get(tr.getAttribute('data-path'))); $('vin-chart').scrollIntoView(); }
}));
$('vin-search').addEventListener('input', (e) => { S.q = e.target.value; search(); draw(); tables(); writeHash(); });
document.querySelectorAll('button[data-view]').forEach((b) => b.addEventListener('click', () => { S.view = b.dataset.view; render(); }));
document.querySelectorAll('button[data-size]').forEach((b) => b.addEventListener('click', () => { S.size = b.dataset.size; render(); }));
D.metrics.forEach((m) => {
  const b = document.createElement('button');
  b.type = 'button';
  b.dataset.metric = m.name;
  b.textContent = m.label;
  b.addEventListener('click', () => { S.metric = m.name; render(); });
  $('vin-metrics').appendChild(b);
});
$('vin-sizes').hidden = !CMP;
addEventListener('hashchange', () => { readHash(); render(); });
let resizing = 0;
addEventListener('resize', () => { clearTimeout(resizing); resizing = setTimeout(draw, 150); });

$('vin-title').textContent = D.title;
document.title = D.title + ' - vin-inspect report';
readHash();
facts();
render();
document.documentElement.setAttribute('data-ready', '1');
})();
