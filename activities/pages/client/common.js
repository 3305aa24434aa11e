// Shared by callpipe's pages (inlined, runs in the browser with uPlot loaded): drawing a chart that
// follows its container's width, and reading the JSON a page embeds.
(function () {
  'use strict';

  function data(id) {
    const el = document.getElementById(id);
    return el ? JSON.parse(el.textContent || 'null') : null;
  }

  /** A uPlot chart in `el` whose width follows the element; `make(width)` returns its options. */
  function chart(el, make, series) {
    const width = () => Math.max(280, el.clientWidth || 600);
    const plot = new uPlot(make(width()), series, el);
    let last = width();
    window.addEventListener('resize', function () {
      const w = width();
      if (w !== last) {
        last = w;
        plot.setSize({ width: w, height: plot.height });
      }
    });
    el.setAttribute('data-drawn', 'true');
    return plot;
  }

  /** Bars for uPlot series (counts per bucket). */
  function bars() {
    return uPlot.paths.bars({ size: [0.8, 60] });
  }

  window.callpipe = { data: data, chart: chart, bars: bars };
})();
