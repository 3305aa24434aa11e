#!/usr/bin/env node
// Container health probe (the Dockerfile's HEALTHCHECK, docker-compose.yml's healthchecks): exits 0 when the
// URL answers 2xx within 3 s, 1 otherwise. Default: this container's workers' readiness,
// http://127.0.0.1:$CALLPIPE_METRICS_PORT/readyz. Plain JavaScript, so a probe costs one Node start and no tsx.
const url = process.argv[2] ?? `http://127.0.0.1:${process.env.CALLPIPE_METRICS_PORT || '9464'}/readyz`;

fetch(url, { signal: AbortSignal.timeout(3000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
