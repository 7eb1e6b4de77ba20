// The live view's browser script, served as /static/live-view.js. Plain ES2017 for the browser, no bundler;
// it builds the page with textContent only (no HTML from data). Kept free of backquotes, dollar-brace and
// backslashes so it can live in this string as it is.
export const LIVE_VIEW_SCRIPT = `'use strict';
(function () {
  var page = document.body.getAttribute('data-page');
  var status = document.getElementById('connection');

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function factText(facts) {
    if (!facts) return '';
    return Object.keys(facts).map(function (k) {
      var v = facts[k];
      return k + '=' + (Array.isArray(v) ? '[' + v.join(', ') + ']' : String(v));
    }).join('  ');
  }

  function stateBadge(state) {
    return el('span', 'state s-' + state, state);
  }

  function renderNode(node) {
    var box = el('div', 'node');
    box.setAttribute('data-policy', node.policy);
    box.setAttribute('data-state', node.state);
    var head = el('div', 'head');
    head.appendChild(el('span', 'policy', node.policy));
    head.appendChild(stateBadge(node.state));
    if (node.status) head.appendChild(el('span', 'status', node.status.details));
    if (node.facts) head.appendChild(el('span', 'facts', factText(node.facts)));
    box.appendChild(head);
    if (node.subchannels && node.subchannels.length > 0) {
      var table = el('table', 'subchannels');
      node.subchannels.forEach(function (s) {
        var row = el('tr', 'subchannel');
        row.setAttribute('data-address', s.address);
        row.setAttribute('data-state', s.state);
        row.appendChild(el('td', 'address', s.address));
        var cell = el('td');
        cell.appendChild(stateBadge(s.state));
        row.appendChild(cell);
        row.appendChild(el('td', 'picks', s.picks === undefined ? '' : s.picks + ' picks'));
        row.appendChild(el('td', 'share', s.recentShare === undefined ? '' : (100 * s.recentShare).toFixed(1) + ' %'));
        table.appendChild(row);
      });
      box.appendChild(table);
    }
    if (node.children && node.children.length > 0) {
      var list = el('ul', 'children');
      node.children.forEach(function (c) {
        var item = el('li', 'child');
        item.setAttribute('data-name', c.name);
        var edge = el('div', 'edge', c.name);
        if (c.facts) edge.appendChild(el('span', 'facts', factText(c.facts)));
        item.appendChild(edge);
        item.appendChild(renderNode(c.node));
        list.appendChild(item);
      });
      box.appendChild(list);
    }
    return box;
  }

  function cellRow(cells, className) {
    var row = el('tr', className);
    cells.forEach(function (c) { row.appendChild(el('td', null, c)); });
    return row;
  }

  function renderXds(xds) {
    var area = document.getElementById('xds');
    area.textContent = '';
    area.appendChild(el('h2', null, 'xDS resources'));
    if (!xds) {
      area.appendChild(el('p', 'empty', 'This channel has no xDS client (its target is not xds:).'));
      return;
    }
    var servers = xds.servers.length > 0 ? xds.servers : [{ uri: xds.server, stream: xds.stream, connectivityError: xds.connectivityError }];
    servers.forEach(function (x) {
      area.appendChild(el('p', 'server', 'Server ' + x.uri + ': stream ' + x.stream +
        (x.connectivityError ? ' (' + x.connectivityError.details + ')' : '')));
    });
    area.appendChild(el('p', 'note', 'The client is shared by every xds: channel of its bootstrap: resources this channel does not use are greyed.'));
    var table = el('table', 'resources');
    table.appendChild(cellRow(['type', 'name', 'status', 'version', 'from', 'updated', 'error'], 'header'));
    var ours = xds.resources.filter(function (r) { return r.usedByChannel; });
    var others = xds.resources.filter(function (r) { return !r.usedByChannel; });
    ours.concat(others).forEach(function (r) {
      var error = r.error ? r.error.details + ' (version ' + r.error.version + ')' : '';
      if (r.ambientError) error += (error ? '; ' : '') + r.ambientError.details;
      var row = cellRow([r.type, r.name, r.status, r.version || '', r.server || '', r.updatedAt || '', error],
        r.usedByChannel ? 'resource' : 'resource other');
      row.setAttribute('data-status', r.status);
      row.setAttribute('data-used', String(r.usedByChannel));
      table.appendChild(row);
    });
    area.appendChild(table);
  }

  function labelText(labels) {
    return Object.keys(labels).map(function (k) { return k + '=' + labels[k]; }).join('  ');
  }

  function valueText(type, p) {
    if (type !== 'histogram') return String(p.value);
    if (p.count === 0) return 'count 0';
    var le = p.buckets.boundaries.map(function (b, i) { return 'le ' + b + ': ' + p.buckets.counts[i]; });
    le.push('above: ' + p.buckets.counts[p.buckets.counts.length - 1]);
    return 'count ' + p.count + ', sum ' + p.sum + ', min ' + p.min + ', max ' + p.max + ' (' + le.join(', ') + ')';
  }

  function renderMetrics(m) {
    var area = document.getElementById('metrics');
    area.textContent = '';
    area.appendChild(el('h2', null, 'Metrics (OpenTelemetry)'));
    if (!m.recording) {
      area.appendChild(el('p', 'empty', 'This channel records no metrics: name them in enableMetrics, in register({ metrics }) or the lbtree.metrics channel option (a MeterProvider is optional).'));
      return;
    }
    if (m.instruments.length === 0) {
      area.appendChild(el('p', 'empty', 'No metric is enabled for this channel: every lbtree metric is experimental, off until named in enableMetrics.'));
      return;
    }
    var table = el('table', 'metrics');
    table.appendChild(cellRow(['name', 'type', 'unit', 'labels', 'value'], 'header'));
    m.instruments.forEach(function (i) {
      if (i.points.length === 0) {
        var none = cellRow([i.name, i.type, i.unit, '', 'nothing recorded yet'], 'metric');
        none.setAttribute('data-metric', i.name);
        table.appendChild(none);
      }
      i.points.forEach(function (p) {
        var row = cellRow([i.name, i.type, i.unit, labelText(p.labels), valueText(i.type, p)], 'metric');
        row.setAttribute('data-metric', i.name);
        row.setAttribute('data-value', String(i.type === 'histogram' ? p.count : p.value));
        table.appendChild(row);
      });
    });
    area.appendChild(table);
  }

  function renderChannel(snap) {
    document.getElementById('title').textContent = 'Channel ' + snap.id + ': ' + (snap.target || '(target not known to lbtree)');
    var summary = document.getElementById('summary');
    summary.textContent = '';
    summary.appendChild(document.createTextNode('Created ' + snap.createdAt + ', state '));
    summary.appendChild(stateBadge(snap.state || 'none'));
    summary.appendChild(document.createTextNode(', as of ' + snap.at + '; ' + snap.picks.inWindow +
      ' picks from ' + snap.picks.window.from + ' to ' + snap.picks.window.to));
    var tree = document.getElementById('tree');
    tree.textContent = '';
    tree.appendChild(el('h2', null, 'Load balancing tree'));
    if (snap.tree) tree.appendChild(renderNode(snap.tree));
    else tree.appendChild(el('p', 'empty', 'The root policy has not had its first update yet.'));
    if (snap.pending) {
      tree.appendChild(el('h2', null, 'Switching to (not serving yet)'));
      tree.appendChild(renderNode(snap.pending));
    }
    renderXds(snap.xds);
    renderMetrics(snap.metrics);
  }

  function renderList(data) {
    var body = document.getElementById('channels');
    body.textContent = '';
    if (data.channels.length === 0) {
      body.appendChild(el('p', 'empty', 'No channel runs an lbtree policy yet.'));
      return;
    }
    var table = el('table', 'channels');
    table.appendChild(cellRow(['id', 'target', 'root policy', 'state', 'created'], 'header'));
    data.channels.forEach(function (c) {
      var row = el('tr', 'channel');
      row.setAttribute('data-id', c.id);
      var link = el('a', null, c.id);
      link.href = 'channels/' + encodeURIComponent(c.id);
      var cell = el('td');
      cell.appendChild(link);
      row.appendChild(cell);
      row.appendChild(el('td', null, c.target || '(not known)'));
      row.appendChild(el('td', null, c.policy || ''));
      var state = el('td');
      state.appendChild(stateBadge(c.state || 'none'));
      row.appendChild(state);
      row.appendChild(el('td', null, c.createdAt));
      table.appendChild(row);
    });
    body.appendChild(table);
  }

  var id = document.body.getAttribute('data-channel');
  var source = new EventSource(page === 'channel' ? encodeURIComponent(id) + '/events' : 'events');
  source.onopen = function () { status.textContent = 'live'; status.className = 'live'; };
  source.onerror = function () { status.textContent = 'reconnecting'; status.className = 'down'; };
  source.onmessage = function (event) {
    var data = JSON.parse(event.data);
    if (page === 'channel') renderChannel(data); else renderList(data);
  };
  source.addEventListener('gone', function () {
    source.close();
    status.textContent = 'channel closed';
    status.className = 'down';
  });
})();
`;
