/** The workers' HTTP endpoint: metrics, liveness, and readiness that follows the workers' state. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { serveMetrics } from '../../workers/runtime.ts';

describe('serveMetrics', () => {
  let ready = false;
  let base: string;
  let server: Server;

  beforeAll(async () => {
    const served = await serveMetrics(0, { host: '127.0.0.1', ready: () => ready });
    server = served.server;
    base = served.url.replace(/\/metrics$/, '');
  });
  afterAll(() => server.close());

  it('answers /readyz 503 until the workers run, then 200, and 503 again once they stop', async () => {
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    ready = true;
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ready\n');
    ready = false;
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
  });

  it('answers /livez whatever the workers do, /metrics with our counters, anything else 404', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE callpipe_service_requests_total counter');
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it('is never ready when nobody says so', async () => {
    const served = await serveMetrics(0, { host: '127.0.0.1' });
    try {
      expect((await fetch(served.url.replace(/\/metrics$/, '/readyz'))).status).toBe(503);
    } finally {
      served.server.close();
    }
  });
});
