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

  // --- the calls table: sort by a header, filter by the selects and the search box ------------------
  const table = document.getElementById('calls');
  const body = table.tBodies[0];
  const rows = Array.prototype.slice.call(body.rows);
  const headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  let sortedBy = -1;
  let ascending = true;
  headers.forEach(function (th, col) {
    th.addEventListener('click', function () {
      ascending = sortedBy === col ? !ascending : true;
      sortedBy = col;
      const numeric = th.getAttribute('data-type') === 'num';
      const value = function (row) {
        const v = row.cells[col].getAttribute('data-v');
        return v === null ? row.cells[col].textContent : v;
      };
      rows.sort(function (a, b) {
        const x = value(a);
        const y = value(b);
        let c;
        if (numeric) {
          const nx = x === '' ? Infinity : Number(x);
          const ny = y === '' ? Infinity : Number(y);
          c = nx - ny;
        } else c = x.localeCompare(y);
        return ascending ? c : -c;
      });
      rows.forEach(function (r) {
        body.appendChild(r);
      });
      headers.forEach(function (h) {
        h.classList.remove('sorted-asc', 'sorted-desc');
      });
      th.classList.add(ascending ? 'sorted-asc' : 'sorted-desc');
    });
  });

  const status = document.getElementById('filter-status');
  const sentiment = document.getElementById('filter-sentiment');
  const customer = document.getElementById('filter-customer');
  const category = document.getElementById('filter-category');
  const text = document.getElementById('filter-text');
  const shown = document.getElementById('shown');
  function apply() {
    const q = text.value.trim().toLowerCase();
    let n = 0;
    rows.forEach(function (r) {
      const ok =
        (!status.value || r.getAttribute('data-status') === status.value) &&
        (!sentiment.value || r.getAttribute('data-sentiment') === sentiment.value) &&
        (!customer.value || r.getAttribute('data-customer') === customer.value) &&
        (!category.value ||
          JSON.parse(r.getAttribute('data-categories') || '[]').indexOf(category.value) >= 0) &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = n + ' of ' + rows.length + ' calls';
  }
  [status, sentiment, customer, category].forEach(function (el) {
    el.addEventListener('change', apply);
  });
  text.addEventListener('input', apply);
  apply();
})();
