// The call viewer's behaviour (inlined into call.html): the sentiment chart, and the audio player
// synchronized with the transcript and the timeline. Works from a file:// page with no network.
(function () {
  'use strict';
  const cp = window.callpipe;

  // --- sentiment over the call, one series per speaker ------------------------------------------------
  const d = cp.data('chart-data');
  const chartEl = document.getElementById('sentiment-chart');
  if (d && chartEl && d.points.length > 0) {
    const xs = d.points.map(function (p) {
      return p[0];
    });
    const series = [xs].concat(
      d.speakers.map(function (_, s) {
        return d.points.map(function (p) {
          return p[1] === s ? p[2] : null;
        });
      }),
    );
    const css = getComputedStyle(document.documentElement);
    const color = function (c) {
      const m = /var\((--[a-z]+)\)/.exec(c);
      return m ? css.getPropertyValue(m[1]).trim() : c;
    };
    const clock = function (t) {
      const s = Math.floor(t);
      return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
    };
    cp.chart(
      chartEl,
      function (width) {
        return {
          width: width,
          height: 240,
          scales: {
            x: { time: false, range: [0, Math.max(d.duration, xs[xs.length - 1])] },
            y: { range: [-1.05, 1.05] },
          },
          axes: [
            { values: (_, ticks) => ticks.map(clock) },
            { values: (_, ticks) => ticks.map((t) => t.toFixed(1)) },
          ],
          series: [{ label: 'time', value: (_, v) => (v == null ? '' : clock(v)) }].concat(
            d.speakers.map(function (s) {
              return {
                label: s.name,
                stroke: color(s.color),
                width: 1.5,
                spanGaps: true,
                points: { show: true, size: 6, fill: color(s.color) },
              };
            }),
          ),
        };
      },
      series,
    );
  } else if (chartEl) {
    chartEl.textContent = 'No sentiment to draw.';
  }

  // --- audio: ?audio=<url>, else the recording beside the results, else a local file the user picks --
  const player = document.getElementById('player');
  const note = document.getElementById('audio-note');
  const fromQuery = new URLSearchParams(window.location.search).get('audio');
  const candidate = fromQuery || player.getAttribute('data-src');
  if (candidate) {
    player.src = candidate;
    player.addEventListener('error', function () {
      if (player.src && player.src.indexOf('blob:') !== 0) {
        note.textContent =
          'The recording is not reachable from here: open a local copy, or run `callpipe open <callId>`.';
      }
    });
  } else {
    note.textContent = 'No recording address: open a local copy, or run `callpipe open <callId>`.';
  }
  document.getElementById('audio-file').addEventListener('change', function (e) {
    const file = e.target.files && e.target.files[0];
    if (file) {
      player.src = URL.createObjectURL(file);
      note.textContent = file.name;
    }
  });

  // --- transcript and timeline follow the player; clicking them seeks --------------------------------
  const rows = Array.prototype.slice.call(document.querySelectorAll('#transcript tr.utt'));
  const starts = rows.map(function (r) {
    return Number(r.getAttribute('data-start'));
  });
  const follow = document.getElementById('follow');
  const playhead = document.getElementById('playhead');
  const svg = document.getElementById('timeline');
  let current = -1;
  function seek(t) {
    player.currentTime = t;
    if (player.src) player.play().catch(function () {});
  }
  rows.forEach(function (r) {
    r.querySelector('a.seek').addEventListener('click', function (e) {
      e.preventDefault();
      seek(Number(r.getAttribute('data-start')));
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll('a.seek-to'), function (a) {
    a.addEventListener('click', function () {
      seek(Number(a.getAttribute('data-start')));
    });
  });
  svg.addEventListener('click', function (e) {
    const t = e.target.getAttribute && e.target.getAttribute('data-start');
    if (t) seek(Number(t));
  });
  player.addEventListener('timeupdate', function () {
    const t = player.currentTime;
    // The last utterance that started by now.
    let lo = 0;
    let hi = starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found !== current) {
      if (current >= 0) rows[current].classList.remove('current');
      current = found;
      if (current >= 0) {
        rows[current].classList.add('current');
        if (follow.checked) rows[current].scrollIntoView({ block: 'center', behavior: 'smooth' });
      }
    }
    const total = Number(d && d.duration) || player.duration || 1;
    const box = svg.viewBox.baseVal;
    const x = 110 + (t / total) * (box.width - 120);
    playhead.setAttribute('x1', x);
    playhead.setAttribute('x2', x);
    playhead.setAttribute('visibility', 'visible');
  });
})();
