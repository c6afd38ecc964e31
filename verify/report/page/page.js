// kseg report: draws the page from the JSON lines in #kseg-data. Every
// text from the data goes into the document as text (textContent,
// attribute values), never as markup.
(function () {
  'use strict';

  var lines = JSON.parse(document.getElementById('kseg-data').textContent);
  var head = lines[0];
  var sections = [];
  var byID = {};
  lines.slice(1).forEach(function (l) {
    if (l.kind === 'section') {
      var s = { line: l, rows: [] };
      sections.push(s);
      byID[l.id] = s;
    } else if (sections.length > 0) {
      sections[sections.length - 1].rows.push(l);
    }
  });

  // ---- helpers --------------------------------------------------------

  // el makes an element: props are attributes (class, id, ...) or event
  // handlers (on...); children are nodes or strings (as text).
  function el(tag, props) {
    var e = document.createElement(tag);
    setProps(e, props);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function setProps(e, props) {
    if (!props) return;
    Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v === undefined || v === null || v === false) return;
      if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    });
  }
  function append(e, kid) {
    if (kid === undefined || kid === null || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { append(e, k); }); return; }
    e.appendChild(typeof kid === 'object' ? kid : document.createTextNode(String(kid)));
  }
  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, props) {
    var e = document.createElementNS(SVG, tag);
    setProps(e, props);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }

  function count(n) { return n === null || n === undefined ? '' : Number(n).toLocaleString('en-US'); }
  function size(n) {
    if (n === null || n === undefined) return '';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
    var v = n, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return u === 0 ? n + ' B' : v.toFixed(1) + ' ' + units[u];
  }
  function time(ms) {
    if (ms === null || ms === undefined || ms < 0 || ms >= 253402300800000) return '';
    return new Date(ms).toISOString().replace('.000Z', 'Z');
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return '';
    var s = Math.floor(Math.abs(ms) / 1000), sign = ms < 0 ? '-' : '';
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d > 0) return sign + d + 'd' + h + 'h';
    if (h > 0) return sign + h + 'h' + m + 'm';
    if (m > 0) return sign + m + 'm' + (s % 60) + 's';
    return sign + (Math.abs(ms) < 1000 ? Math.abs(ms) + 'ms' : s + 's');
  }
  function ids(list) { return list ? list.join(',') : ''; }
  // natural compares strings with their digit runs as numbers (orders-2
  // before orders-10).
  function natural(a, b) {
    var ra = String(a).split(/(\d+)/), rb = String(b).split(/(\d+)/);
    for (var i = 0; i < Math.min(ra.length, rb.length); i++) {
      if (ra[i] === rb[i]) continue;
      if (i % 2 === 1 && ra[i].length < 16 && rb[i].length < 16) return Number(ra[i]) - Number(rb[i]);
      return ra[i] < rb[i] ? -1 : 1;
    }
    return ra.length - rb.length;
  }
  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined || a === '') return 1;
    if (b === null || b === undefined || b === '') return -1;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return natural(a, b);
  }
  function statusClass(status) {
    if (status === 'ok') return 'st-ok';
    var warn = { 'missing-index': 1, 'padded-index': 1, 'leftover-files': 1 };
    return String(status).split(',').every(function (w) { return warn[w]; }) ? 'st-warning' : 'st-error';
  }

  // ---- tables ---------------------------------------------------------

  // Table draws rows a page at a time, sortable by any column, with a
  // filter. columns: {key, label, num, text(row) -> string|Node,
  // value(row) -> sort value, cls}.
  function Table(id, columns, rows, opts) {
    opts = opts || {};
    this.id = id;
    this.columns = columns;
    this.all = rows;
    this.rows = rows;
    this.pageSize = opts.pageSize || 50;
    this.page = 0;
    this.sortCol = opts.sortCol === undefined ? -1 : opts.sortCol;
    this.sortDir = opts.sortDir || 1;
    this.rowProps = opts.rowProps;
    this.highlight = null;
    this.node = el('div', { class: 'tablewrap', id: id });
    this.pager = el('div', { class: 'pager' });
    this.wrap = el('div', null, this.node, this.pager);
    this.sort();
    this.draw();
  }
  Table.prototype.value = function (c, r) { return c.value ? c.value(r) : r[c.key]; };
  Table.prototype.sort = function () {
    if (this.sortCol < 0) return;
    var c = this.columns[this.sortCol], dir = this.sortDir, self = this;
    this.rows = this.rows.slice().sort(function (a, b) { return dir * compare(self.value(c, a), self.value(c, b)); });
  };
  Table.prototype.filter = function (keep) {
    this.rows = keep ? this.all.filter(keep) : this.all;
    this.page = 0;
    this.sort();
    this.draw();
  };
  Table.prototype.show = function (row) {
    var i = this.rows.indexOf(row);
    if (i < 0) { this.filter(null); i = this.rows.indexOf(row); }
    if (i < 0) return null;
    this.page = Math.floor(i / this.pageSize);
    this.highlight = row;
    this.draw();
    return this.node.querySelector('tr.hl');
  };
  Table.prototype.draw = function () {
    var self = this;
    var start = this.page * this.pageSize, end = Math.min(this.rows.length, start + this.pageSize);
    var headRow = el('tr');
    this.columns.forEach(function (c, i) {
      var sort = i === self.sortCol ? (self.sortDir > 0 ? 'ascending' : 'descending') : 'none';
      headRow.appendChild(el('th', { class: c.num ? 'num' : null, 'aria-sort': sort, scope: 'col' },
        el('button', { type: 'button', onclick: function () {
          if (self.sortCol === i) self.sortDir = -self.sortDir; else { self.sortCol = i; self.sortDir = c.num ? -1 : 1; }
          self.page = 0; self.sort(); self.draw();
        } }, c.label)));
    });
    var body = el('tbody');
    for (var k = start; k < end; k++) {
      var r = this.rows[k];
      var tr = el('tr', this.rowProps ? this.rowProps(r) : null);
      if (r === this.highlight) tr.className = 'hl';
      this.columns.forEach(function (c) {
        var v = c.text ? c.text(r) : r[c.key];
        tr.appendChild(el('td', { class: (c.num ? 'num ' : '') + (c.cls ? (typeof c.cls === 'function' ? c.cls(r) : c.cls) : '') || null }, v));
      });
      body.appendChild(tr);
    }
    var table = el('table', null, el('thead', null, headRow), body);
    this.node.replaceChildren(table);
    var pages = Math.max(1, Math.ceil(this.rows.length / this.pageSize));
    this.pager.replaceChildren(
      el('button', { type: 'button', disabled: this.page === 0, onclick: function () { self.page--; self.draw(); } }, 'previous'),
      el('span', { class: 'range' }, this.rows.length === 0 ? 'no rows' :
        'rows ' + count(start + 1) + '\u2013' + count(end) + ' of ' + count(this.rows.length) +
        (this.rows.length < this.all.length ? ' (of ' + count(this.all.length) + ')' : '')),
      el('button', { type: 'button', disabled: this.page >= pages - 1, onclick: function () { self.page++; self.draw(); } }, 'next'));
    this.pager.style.display = this.rows.length > this.pageSize ? '' : 'none';
  };
  var tables = [];
  function table(id, columns, rows, opts) {
    var t = new Table(id, columns, rows, opts);
    tables.push(t);
    return t;
  }

  // ---- charts ---------------------------------------------------------

  // chart draws a traffic line's records per bucket as bars, with each
  // bar's time, records and bytes in its tooltip.
  function chart(t, label) {
    var W = 600, H = 120, L = 44, B = 18;
    var max = 0, total = 0, bytes = 0;
    t.records.forEach(function (v, i) { max = Math.max(max, v); total += v; bytes += t.bytes[i]; });
    var g = svg('svg', { viewBox: '0 0 ' + W + ' ' + (H + B), role: 'img', 'aria-label': label + ': records per ' + duration(t.bucket_ms) });
    g.appendChild(svg('path', { class: 'axis', d: 'M' + L + ' 0V' + H + 'H' + W }));
    var w = (W - L) / Math.max(1, t.records.length);
    t.records.forEach(function (v, i) {
      if (v <= 0 || max <= 0) return;
      var h = Math.max(1, H * v / max);
      var start = t.start + i * t.bucket_ms;
      g.appendChild(svg('rect', { class: 'bar', x: (L + i * w).toFixed(2), y: (H - h).toFixed(2), width: Math.max(w - 1, 0.5).toFixed(2), height: h.toFixed(2) },
        svg('title', null, time(start) + ': ' + count(v) + ' records, ' + size(t.bytes[i]))));
    });
    g.appendChild(svg('text', { x: L - 4, y: 10, 'text-anchor': 'end' }, count(max)));
    g.appendChild(svg('text', { x: L - 4, y: H, 'text-anchor': 'end' }, '0'));
    g.appendChild(svg('text', { x: L, y: H + 13 }, time(t.start)));
    g.appendChild(svg('text', { x: W, y: H + 13, 'text-anchor': 'end' }, time(t.start + t.records.length * t.bucket_ms)));
    return el('div', { class: 'chart', 'data-name': t.name },
      el('div', { class: 'title' }, label),
      el('div', { class: 'sub' }, count(total) + ' records, ' + size(bytes) + '; bars of ' + duration(t.bucket_ms)),
      g);
  }

  // ---- sections -------------------------------------------------------

  var partitionsTable = null;
  var partitionByDir = {};
  var trafficByDir = {};
  var showTraffic = null;
  if (byID.partitions) byID.partitions.rows.forEach(function (r) { partitionByDir[r.dir] = r; });
  if (byID.traffic) byID.traffic.rows.forEach(function (r) { if (r.scope === 'partition') trafficByDir[r.dir] = r; });

  function goToPartition(dir) {
    var row = partitionByDir[dir];
    if (!row || !partitionsTable) return;
    var tr = partitionsTable.show(row);
    if (tr) tr.scrollIntoView({ block: 'center' });
  }

  function partitionName(dir) { return dir && partitionByDir[dir] ? partitionByDir[dir].name : ''; }

  function partitionLink(dir, text) {
    if (!dir || !partitionByDir[dir]) return text || '';
    return el('a', { class: 'link', href: '#partition=' + encodeURIComponent(dir), onclick: function (ev) { ev.preventDefault(); goToPartition(dir); } }, text);
  }

  var render = {};

  render.partitions = function (s, box) {
    var filterText = el('input', { type: 'search', placeholder: 'filter by name or status', 'aria-label': 'filter partitions' });
    var onlyBad = el('input', { type: 'checkbox' });
    function apply() {
      var q = filterText.value.toLowerCase(), bad = onlyBad.checked;
      partitionsTable.filter(function (r) {
        if (bad && r.status === 'ok' && r.errors + r.warnings === 0) return false;
        return !q || r.name.toLowerCase().indexOf(q) >= 0 || r.status.indexOf(q) >= 0;
      });
    }
    filterText.addEventListener('input', apply);
    onlyBad.addEventListener('change', apply);
    box.appendChild(el('div', { class: 'controls' }, filterText, el('label', null, onlyBad, ' only partitions with a status or findings')));
    partitionsTable = table('partitions-table', [
      { key: 'name', label: 'partition', value: function (r) { return r.name; }, cls: 'part' },
      { key: 'segments', label: 'segments', num: true, text: function (r) { return count(r.segments); } },
      { key: 'offsets', label: 'offsets', value: function (r) { return r.base_offset; },
        text: function (r) { return r.last_offset === null ? '-' : r.base_offset + '..' + r.last_offset; } },
      { key: 'next_offset', label: 'next offset', num: true },
      { key: 'log_bytes', label: 'size', num: true, text: function (r) { return size(r.log_bytes); } },
      { key: 'last_timestamp', label: 'last timestamp', text: function (r) { return time(r.last_timestamp); } },
      { key: 'status', label: 'status', cls: function (r) { return statusClass(r.status); } },
      { key: 'errors', label: 'errors', num: true, cls: function (r) { return r.errors ? 'sev-error' : ''; } },
      { key: 'warnings', label: 'warnings', num: true, cls: function (r) { return r.warnings ? 'sev-warning' : ''; } },
      { key: 'traffic', label: 'traffic', value: function () { return ''; }, text: function (r) {
        return trafficByDir[r.dir] ? el('button', { type: 'button', class: 'link', onclick: function () { showTraffic(r.dir); } }, 'chart') : '';
      } }
    ], s.rows, { rowProps: function (r) { return { 'data-dir': r.dir }; } });
    box.appendChild(partitionsTable.wrap);
  };

  render.findings = function (s, box) {
    var findings = s.rows.filter(function (r) { return r.kind === 'finding'; });
    var checks = {}, sevs = { error: 0, warning: 0, info: 0 };
    findings.forEach(function (f) { checks[f.check] = (checks[f.check] || 0) + 1; sevs[f.severity] = (sevs[f.severity] || 0) + 1; });
    if (findings.length === 0) {
      box.appendChild(el('p', { class: 'note' }, 'no findings: every segment, index and side file checked is as a broker expects'));
      return;
    }
    var boxes = {};
    var controls = el('div', { class: 'controls', id: 'findings-filters' });
    ['error', 'warning', 'info'].forEach(function (sev) {
      var cb = el('input', { type: 'checkbox', value: sev, 'data-severity': sev });
      cb.checked = sev !== 'info' || sevs.error + sevs.warning === 0;
      boxes[sev] = cb;
      cb.addEventListener('change', apply);
      controls.appendChild(el('label', { class: 'sev-' + sev }, cb, ' ' + sev + ' (' + count(sevs[sev] || 0) + ')'));
    });
    var select = el('select', { id: 'findings-check', 'aria-label': 'check id' }, el('option', { value: '' }, 'every check'));
    Object.keys(checks).sort().forEach(function (c) { select.appendChild(el('option', { value: c }, c + ' (' + count(checks[c]) + ')')); });
    select.addEventListener('change', apply);
    var text = el('input', { type: 'search', placeholder: 'filter by file or message', 'aria-label': 'filter findings' });
    text.addEventListener('input', apply);
    controls.appendChild(select);
    controls.appendChild(text);
    box.appendChild(controls);
    var t = table('findings-table', [
      { key: 'severity', label: 'severity', value: function (r) { return { error: 0, warning: 1, info: 2 }[r.severity]; },
        text: function (r) { return r.severity; }, cls: function (r) { return 'sev-' + r.severity; } },
      { key: 'check', label: 'check' },
      { key: 'partition_dir', label: 'partition', value: function (r) { return partitionName(r.partition_dir); },
        text: function (r) { return partitionLink(r.partition_dir, partitionName(r.partition_dir)); }, cls: 'part' },
      { key: 'file', label: 'file', cls: 'part', text: function (r) { return r.file.split(/[\\/]/).pop(); } },
      { key: 'position', label: 'position', num: true },
      { key: 'offset', label: 'offset', num: true },
      { key: 'message', label: 'message', cls: 'msg' }
    ], findings, { pageSize: 25 });
    function apply() {
      var check = select.value, q = text.value.toLowerCase();
      t.filter(function (r) {
        return boxes[r.severity].checked && (!check || r.check === check) &&
          (!q || r.file.toLowerCase().indexOf(q) >= 0 || r.message.toLowerCase().indexOf(q) >= 0);
      });
    }
    apply();
    box.appendChild(t.wrap);
  };

  render.traffic = function (s, box) {
    var topics = s.rows.filter(function (r) { return r.scope === 'topic'; });
    var parts = s.rows.filter(function (r) { return r.scope === 'partition'; });
    box.appendChild(el('h3', null, 'Per topic'));
    var grid = el('div', { class: 'charts', id: 'topic-charts' });
    var perPage = 12, page = 0;
    var pager = el('div', { class: 'pager' });
    function drawTopics() {
      grid.replaceChildren();
      topics.slice(page * perPage, (page + 1) * perPage).forEach(function (t) { grid.appendChild(chart(t, t.name)); });
      var pages = Math.ceil(topics.length / perPage);
      pager.replaceChildren(
        el('button', { type: 'button', disabled: page === 0, onclick: function () { page--; drawTopics(); } }, 'previous'),
        el('span', null, 'topics ' + count(page * perPage + 1) + '\u2013' + count(Math.min(topics.length, (page + 1) * perPage)) + ' of ' + count(topics.length)),
        el('button', { type: 'button', disabled: page >= pages - 1, onclick: function () { page++; drawTopics(); } }, 'next'));
      pager.style.display = topics.length > perPage ? '' : 'none';
    }
    drawTopics();
    box.appendChild(grid);
    box.appendChild(pager);
    box.appendChild(el('h3', null, 'Per partition'));
    var list = el('datalist', { id: 'traffic-partitions' });
    parts.forEach(function (p) { list.appendChild(el('option', { value: p.name })); });
    var input = el('input', { type: 'search', list: 'traffic-partitions', placeholder: 'partition', 'aria-label': 'partition to chart' });
    var one = el('div', { class: 'charts', id: 'partition-chart' });
    showTraffic = function (dir) {
      var p = trafficByDir[dir];
      if (!p) return;
      input.value = p.name;
      one.replaceChildren(chart(p, p.name));
      one.scrollIntoView({ block: 'nearest' });
    };
    input.addEventListener('change', function () {
      var name = input.value;
      for (var i = 0; i < parts.length; i++) if (parts[i].name === name) { showTraffic(parts[i].dir); return; }
    });
    box.appendChild(el('div', { class: 'controls' }, input, list, el('span', { class: 'absent' }, 'or "chart" in the partitions table')));
    box.appendChild(one);
    // The busiest partition first.
    var busiest = null, most = -1;
    parts.forEach(function (p) {
      var n = p.records.reduce(function (a, b) { return a + b; }, 0);
      if (n > most) { most = n; busiest = p; }
    });
    if (busiest) one.appendChild(chart(busiest, busiest.name));
    if (busiest) input.value = busiest.name;
  };

  render.groups = function (s, box) {
    var t = table('groups-table', [
      { key: 'group', label: 'group', cls: 'wrap' },
      { key: 'topic', label: 'topic', cls: 'wrap' },
      { key: 'partition', label: 'partition', num: true },
      { key: 'offset', label: 'offset', num: true },
      { key: 'log_end_offset', label: 'log end offset', num: true },
      { key: 'lag', label: 'lag', num: true },
      { key: 'commit_timestamp', label: 'committed', text: function (r) { return time(r.commit_timestamp); } }
    ], s.rows, { sortCol: 5, sortDir: -1 });
    box.appendChild(t.wrap);
  };

  render.transactions = function (s, box) {
    var open = s.rows.filter(function (r) { return r.kind === 'open_transaction'; });
    var lags = s.rows.filter(function (r) { return r.kind === 'lso'; });
    box.appendChild(el('h3', null, 'Open transactions (' + count(open.length) + ')'));
    if (open.length > 0) {
      box.appendChild(table('open-transactions-table', [
        { key: 'partition_dir', label: 'partition', cls: 'part' },
        { key: 'producer_id', label: 'producer id', num: true },
        { key: 'producer_epoch', label: 'epoch', num: true },
        { key: 'first_offset', label: 'first offset', num: true },
        { key: 'last_offset', label: 'last offset', num: true },
        { key: 'age_ms', label: 'age', num: true, text: function (r) { return duration(r.age_ms); } },
        { key: 'verdict', label: 'verdict', cls: function (r) { return r.verdict === 'ongoing' ? '' : 'sev-error'; } },
        { key: 'transactional_id', label: 'transactional id', cls: 'wrap' },
        { key: 'why', label: 'why', cls: 'msg' }
      ], open, { sortCol: 5, sortDir: -1 }).wrap);
    }
    box.appendChild(el('h3', null, 'Last stable offset held by a transaction (' + count(lags.length) + ')'));
    if (lags.length > 0) {
      box.appendChild(table('lso-table', [
        { key: 'partition_dir', label: 'partition', cls: 'part' },
        { key: 'log_end_offset', label: 'log end offset', num: true },
        { key: 'high_watermark', label: 'high watermark', num: true },
        { key: 'last_stable_offset', label: 'last stable offset', num: true },
        { key: 'lso_lag', label: 'LSO lag', num: true },
        { key: 'open_transactions', label: 'open', num: true }
      ], lags, { sortCol: 4, sortDir: -1 }).wrap);
    }
  };

  render.retention = function (s, box) {
    var blocked = s.rows.filter(function (r) { return r.blocked_by; }).length;
    var deletable = s.rows.reduce(function (a, r) { return a + r.deletable; }, 0);
    box.appendChild(el('p', { class: 'note', id: 'retention-summary' }, count(s.rows.length) + ' partitions: ' + count(deletable) +
      ' segments deletable by the next pass, ' + count(blocked) + ' partitions blocked'));
    box.appendChild(table('retention-table', [
      { key: 'partition_dir', label: 'partition', cls: 'part' },
      { key: 'policy', label: 'cleanup.policy', value: function (r) { return r.config['cleanup.policy']; }, text: function (r) { return r.config['cleanup.policy']; } },
      { key: 'retention_ms', label: 'retention.ms', num: true, value: function (r) { return r.config['retention.ms']; },
        text: function (r) { return r.config['retention.ms'] < 0 ? '-1' : duration(r.config['retention.ms']); } },
      { key: 'retention_bytes', label: 'retention.bytes', num: true, value: function (r) { return r.config['retention.bytes']; },
        text: function (r) { return r.config['retention.bytes'] < 0 ? '-1' : size(r.config['retention.bytes']); } },
      { key: 'segments', label: 'segments', num: true },
      { key: 'deletable', label: 'deletable', num: true },
      { key: 'bytes_freed', label: 'bytes freed', num: true, text: function (r) { return size(r.bytes_freed); } },
      { key: 'blocked_by', label: 'blocked by', value: function (r) { return r.blocked_by ? r.blocked_by.reason : ''; },
        text: function (r) { return r.blocked_by ? r.blocked_by.segment + ': ' + r.blocked_by.reason + ' (' + count(r.blocked_by.segments_waiting) + ' waiting)' : (r.error || ''); },
        cls: function (r) { return r.blocked_by || r.error ? 'sev-warning wrap' : 'wrap'; } }
    ], s.rows, { sortCol: 7, sortDir: -1 }).wrap);
  };

  render.cleaner = function (s, box) {
    box.appendChild(table('cleaner-table', [
      { key: 'partition_dir', label: 'partition', cls: 'part' },
      { key: 'first_dirty_offset', label: 'first dirty', num: true },
      { key: 'first_uncleanable_offset', label: 'first uncleanable', num: true },
      { key: 'uncleanable_because', label: 'because' },
      { key: 'clean_bytes', label: 'clean', num: true, text: function (r) { return size(r.clean_bytes); } },
      { key: 'cleanable_bytes', label: 'cleanable', num: true, text: function (r) { return size(r.cleanable_bytes); } },
      { key: 'cleanable_ratio', label: 'ratio', num: true, text: function (r) { return r.cleanable_ratio === null ? '' : r.cleanable_ratio.toFixed(3); } },
      { key: 'min_cleanable_ratio', label: 'min ratio', num: true },
      { key: 'would_clean', label: 'would clean', text: function (r) { return r.would_clean ? 'yes' : 'no'; } },
      { key: 'why_not', label: 'why not', text: function (r) { return r.why_not || r.error || ''; } }
    ], s.rows).wrap);
  };

  render.metadata = function (s, box) {
    var brokers = s.rows.filter(function (r) { return r.kind === 'metadata_broker'; });
    var parts = s.rows.filter(function (r) { return r.kind === 'metadata_partition'; });
    var offline = parts.filter(function (r) { return r.leader < 0; }).length;
    var under = parts.filter(function (r) { return r.isr.length < r.replicas.length; }).length;
    box.appendChild(el('p', { class: 'note', id: 'metadata-summary' }, count(brokers.length) + ' brokers, ' + count(parts.length) +
      ' partitions, ' + count(offline) + ' without a leader, ' + count(under) + ' under-replicated'));
    if (brokers.length > 0) {
      box.appendChild(table('brokers-table', [
        { key: 'id', label: 'broker', num: true },
        { key: 'fenced', label: 'fenced', text: function (r) { return r.fenced ? 'fenced' : 'no'; }, cls: function (r) { return r.fenced ? 'sev-warning' : ''; } },
        { key: 'rack', label: 'rack' }
      ], brokers).wrap);
    }
    box.appendChild(table('metadata-table', [
      { key: 'topic', label: 'topic', cls: 'wrap' },
      { key: 'partition', label: 'partition', num: true },
      { key: 'leader', label: 'leader', num: true, cls: function (r) { return r.leader < 0 ? 'sev-error' : ''; } },
      { key: 'leader_epoch', label: 'leader epoch', num: true },
      { key: 'replicas', label: 'replicas', text: function (r) { return ids(r.replicas); } },
      { key: 'isr', label: 'ISR', value: function (r) { return r.isr.length - r.replicas.length; }, text: function (r) { return ids(r.isr); },
        cls: function (r) { return r.isr.length < r.replicas.length ? 'sev-warning' : ''; } }
    ], parts).wrap);
  };

  // ---- the page -------------------------------------------------------

  document.title = 'kseg report: ' + head.paths.join(' ');
  var header = document.getElementById('top');
  header.appendChild(el('h1', null, 'kseg report'));
  header.appendChild(el('p', { class: 'meta' }, head.paths.join(' '), ' \u2014 generated ', time(head.generated),
    head.now !== head.generated ? ' (analyses as of ' + time(head.now) + ')' : '', ' by kseg ', head.kseg_version));
  function card(key, label, value, cls) {
    return el('div', { class: 'card ' + (cls || '') }, el('div', { class: 'v', id: 'sum-' + key }, value), el('div', { class: 'k' }, label));
  }
  header.appendChild(el('div', { class: 'cards' },
    card('partitions', 'partitions', count(head.partitions)),
    card('segments', 'segments', count(head.segments)),
    card('log_bytes', 'log bytes', size(head.log_bytes)),
    card('errors', 'errors', count(head.errors), head.errors ? 'error' : ''),
    card('warnings', 'warnings', count(head.warnings), head.warnings ? 'warning' : ''),
    card('infos', 'info findings', count(head.infos))));
  var nav = el('nav', { 'aria-label': 'sections' });
  header.appendChild(nav);

  var main = document.getElementById('sections');
  sections.forEach(function (s) {
    var l = s.line;
    var box = el('section', { id: 'sec-' + l.id, class: l.present ? 'present' : 'absent', 'data-rows': l.rows });
    box.appendChild(el('h2', null, l.title));
    box.appendChild(el('p', { class: 'cmd' }, 'Reproduce: ', el('code', null, l.command)));
    if (l.note) box.appendChild(el('p', { class: 'note' + (l.present ? '' : ' absent') }, l.note));
    if (l.present && render[l.id]) render[l.id](s, box);
    nav.appendChild(el('a', { href: '#sec-' + l.id }, l.title + (l.present ? '' : ' (none)')));
    main.appendChild(box);
  });

  // A link to a partition (#partition=DIR) opens its row.
  function followHash() {
    var m = /^#partition=(.*)$/.exec(location.hash);
    if (m) goToPartition(decodeURIComponent(m[1]));
  }
  window.addEventListener('hashchange', followHash);
  followHash();

  // Printing shows every row (up to a bound), then the pages come back.
  var printing = false;
  window.addEventListener('beforeprint', function () {
    printing = true;
    tables.forEach(function (t) { t.savedSize = t.pageSize; t.savedPage = t.page; t.pageSize = 5000; t.page = 0; t.draw(); });
  });
  window.addEventListener('afterprint', function () {
    if (!printing) return;
    printing = false;
    tables.forEach(function (t) { t.pageSize = t.savedSize; t.page = t.savedPage; t.draw(); });
  });
  document.body.setAttribute('data-ready', 'true');
})();
