// The night report's behaviour (inlined into report.html): its two charts, and the calls table that
// sorts by any column and filters by outcome, sentiment, category and text, with no network.
(function () {
  'use strict';
  const cp = window.callpipe;
  const d = cp.data('charts-data');

  function barChart(el, labels, series) {
    const xs = labels.map(function (_, i) {
      return i;
    });
    cp.chart(
      el,
      function (width) {
        return {
          width: width,
          height: 220,
          scales: { x: { time: false, range: [-0.6, labels.length - 0.4] }, y: { range: [0, null] } },
          axes: [
            {
              values: function (_, ticks) {
                return ticks.map(function (t) {
                  return Number.isInteger(t) && labels[t] !== undefined ? labels[t] : '';
                });
              },
              splits: function () {
                return xs;
              },
            },
            {
              values: function (_, ticks) {
                return ticks.map(function (t) {
                  return Number.isInteger(t) ? String(t) : '';
                });
              },
            },
          ],
          series: [{ label: '' }].concat(
            series.map(function (s, i) {
              // One series: centred bars; two: side by side (left of the tick, right of it).
              const one = series.length === 1;
              return {
                label: s.label,
                fill: s.color,
                stroke: s.color,
                width: 0,
                paths: window.uPlot.paths.bars({
                  size: [one ? 0.6 : 0.35, 60],
                  align: one ? 0 : i === 0 ? -1 : 1,
                }),
                points: { show: false },
              };
            }),
          ),
        };
      },
      [xs].concat(
        series.map(function (s) {
          return s.values;
        }),
      ),
    );
  }

  if (d) {
    barChart(document.getElementById('durations-chart'), d.durations.labels, [
      { label: 'calls', color: '#2f6fdb', values: d.durations.counts },
    ]);
    barChart(document.getElementById('sentiment-chart'), d.sentiment.labels, [
      { label: 'overall', color: '#5b6577', values: d.sentiment.overall },
      { label: 'customer', color: '#d9822b', values: d.sentiment.customer },
    ]);
  }

  // --- the calls table: every call's cells as data (calls-data), shown page by page; sort by a header,
  // filter by the selects and the search box. Rows are built with textContent: the data is users' text.
  const all = cp.data('calls-data');
  const table = document.getElementById('calls');
  const body = table.tBodies[0];
  const headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  // Cells of a row (night-report.ts, CallCells): the sort key of each column of the table.
  const C = { id: 0, status: 1, linked: 2, started: 3, dur: 4, durText: 5, agent: 6, sentiment: 7 };
  const D = { mean: 8, customer: 9, categories: 10, score: 11, scoreText: 12, wall: 13, wallText: 14 };
  const SUMMARY = 15;
  const REASON = 16;
  const SORT_KEYS = [
    C.id,
    C.status,
    C.started,
    C.dur,
    C.agent,
    C.sentiment,
    D.mean,
    D.categories,
    D.score,
    D.wall,
    SUMMARY,
  ];
  if (!all) return;
  const rows = all.rows;
  const order = rows.map(function (_, i) {
    return i;
  });
  let shownRows = order;
  let page = 0;

  function cell(text, value, cls) {
    const td = document.createElement('td');
    td.setAttribute('data-v', value === null || value === undefined ? '' : String(value));
    if (cls) td.className = cls;
    td.textContent = text;
    return td;
  }
  function rowOf(i) {
    const r = rows[i];
    const tr = document.createElement('tr');
    tr.setAttribute('data-status', r[C.status]);
    tr.setAttribute('data-sentiment', r[C.sentiment]);
    tr.setAttribute('data-customer', r[D.customer]);
    const id = cell('', r[C.id]);
    if (r[C.linked]) {
      const a = document.createElement('a');
      a.href = all.hrefs[i] || all.href[0] + r[C.id] + all.href[1];
      a.textContent = r[C.id];
      id.appendChild(a);
    } else id.textContent = r[C.id];
    const status = cell('', r[C.status]);
    const badge = document.createElement('span');
    badge.className = 'badge ' + r[C.status];
    badge.textContent = r[C.status];
    status.appendChild(badge);
    const categories = cell('', r[D.categories].join(', '));
    r[D.categories].forEach(function (k) {
      const chip = document.createElement('span');
      chip.className = 'chip';
      chip.textContent = k;
      categories.appendChild(chip);
    });
    const summary = document.createElement('td');
    summary.className = 'summary';
    summary.textContent = r[SUMMARY];
    if (r[REASON]) {
      const reason = document.createElement('span');
      reason.className = 'reason';
      reason.textContent = r[REASON];
      summary.appendChild(reason);
    }
    [
      id,
      status,
      cell(r[C.started], r[C.started]),
      cell(r[C.durText], r[C.dur], 'num'),
      cell(r[C.agent], r[C.agent]),
      cell(r[C.sentiment], r[C.sentiment], 'label-' + r[C.sentiment]),
      cell(r[D.customer], r[D.mean], 'label-' + r[D.customer]),
      categories,
      cell(r[D.scoreText], r[D.score], 'num'),
      cell(r[D.wallText], r[D.wall], 'num'),
      summary,
    ].forEach(function (td) {
      tr.appendChild(td);
    });
    return tr;
  }

  const pager = document.getElementById('pager');
  const at = document.getElementById('page-at');
  const shown = document.getElementById('shown');
  function pages() {
    return Math.max(1, Math.ceil(shownRows.length / all.pageSize));
  }
  function draw() {
    page = Math.min(Math.max(0, page), pages() - 1);
    const from = page * all.pageSize;
    const fragment = document.createDocumentFragment();
    shownRows.slice(from, from + all.pageSize).forEach(function (i) {
      fragment.appendChild(rowOf(i));
    });
    body.replaceChildren(fragment);
    pager.hidden = shownRows.length <= all.pageSize;
    at.textContent = 'page ' + (page + 1) + ' of ' + pages();
    shown.textContent = shownRows.length + ' of ' + rows.length + ' calls';
  }
  [
    ['page-first', -Infinity],
    ['page-prev', -1],
    ['page-next', 1],
    ['page-last', Infinity],
  ].forEach(function (b) {
    document.getElementById(b[0]).addEventListener('click', function () {
      page = Math.abs(b[1]) === Infinity ? (b[1] > 0 ? pages() - 1 : 0) : page + b[1];
      draw();
    });
  });

  let sortedBy = -1;
  let ascending = true;
  headers.forEach(function (th, col) {
    th.addEventListener('click', function () {
      ascending = sortedBy === col ? !ascending : true;
      sortedBy = col;
      const key = SORT_KEYS[col];
      const numeric = th.getAttribute('data-type') === 'num';
      const value = function (i) {
        const v = rows[i][key];
        return Array.isArray(v) ? v.join(', ') : v;
      };
      order.sort(function (a, b) {
        const x = value(a);
        const y = value(b);
        let c;
        if (numeric) {
          // Empty cells last either way.
          const nx = x === null ? Infinity : x;
          const ny = y === null ? Infinity : y;
          c = nx === ny ? 0 : nx === Infinity ? 1 : ny === Infinity ? -1 : ascending ? nx - ny : ny - nx;
          return c || a - b;
        }
        c = String(x).localeCompare(String(y));
        return (ascending ? c : -c) || a - b;
      });
      headers.forEach(function (h) {
        h.classList.remove('sorted-asc', 'sorted-desc');
      });
      th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
      apply();
    });
  });

  const status = document.getElementById('filter-status');
  const sentiment = document.getElementById('filter-sentiment');
  const customer = document.getElementById('filter-customer');
  const category = document.getElementById('filter-category');
  const text = document.getElementById('filter-text');
  let searchable = null;
  function searchText(i) {
    const r = rows[i];
    return [r[C.id], r[C.status], r[C.started], r[C.durText], r[C.agent], r[C.sentiment], r[D.customer]]
      .concat(r[D.categories], [r[D.scoreText], r[D.wallText], r[SUMMARY], r[REASON]])
      .join(' ')
      .toLowerCase();
  }
  function apply() {
    const q = text.value.trim().toLowerCase();
    if (q && !searchable)
      searchable = rows.map(function (_, i) {
        return searchText(i);
      });
    shownRows = order.filter(function (i) {
      const r = rows[i];
      return (
        (!status.value || r[C.status] === status.value) &&
        (!sentiment.value || r[C.sentiment] === sentiment.value) &&
        (!customer.value || r[D.customer] === customer.value) &&
        (!category.value || r[D.categories].indexOf(category.value) >= 0) &&
        (!q || searchable[i].indexOf(q) >= 0)
      );
    });
    page = 0;
    draw();
  }
  [status, sentiment, customer, category].forEach(function (el) {
    el.addEventListener('change', apply);
  });
  text.addEventListener('input', apply);
  apply();
})();
