import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendRequest } from '../../service/http.ts';
import { ServiceError } from '../../service/errors.ts';
import { CostMeter } from '../../service/cost.ts';

let server: http.Server | undefined;

async function serve(handler: http.RequestListener): Promise<string> {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

const base = { endpoint: '/x', family: 'asr' as const, headers: {} };

describe('sendRequest', () => {
  it('sends the body with its length, returns status, text and every Set-Cookie, and counts bytes', async () => {
    let received: { length?: string; type?: string; body: string } = { body: '' };
    const url = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received = { length: req.headers['content-length'], type: req.headers['content-type'], body };
        res.writeHead(200, { 'Set-Cookie': ['token=t2; Path=/', 'lb=a'], 'Retry-After': '3' });
        res.end('[{"ok":true}]');
      });
    });
    const meter = new CostMeter();
    const res = await sendRequest({
      ...base,
      url: `${url}/x`,
      headers: { 'Content-Type': 'application/json' },
      body: '{"é":1}',
      meter,
    });
    expect(received).toEqual({ length: '8', type: 'application/json', body: '{"é":1}' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('[{"ok":true}]');
    expect(res.headers.getSetCookie()).toEqual(['token=t2; Path=/', 'lb=a']);
    expect(res.headers.get('Retry-After')).toBe('3');
    expect(res.headers.get('x-missing')).toBeNull();
    expect(meter.snapshot()).toMatchObject({ requests: 1, bytesSent: 8, bytesReceived: 13 });
  });

  it('reuses one kept-alive socket for a request/response loop', async () => {
    const sockets = new Set<unknown>();
    const url = await serve((req, res) => {
      sockets.add(req.socket);
      res.writeHead(204).end();
    });
    for (let i = 0; i < 20; i += 1) {
      expect((await sendRequest({ ...base, url, body: new Uint8Array(1920) })).status).toBe(204);
    }
    expect(sockets.size).toBe(1);
  });

  it('a silent server is a transient error naming the time limit', async () => {
    const url = await serve(() => undefined);
    const err = await sendRequest({ ...base, url, timeoutMs: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ kind: 'transient', detail: 'no answer within 100 ms', endpoint: '/x' });
  });

  it('a refused connection is a transient error with the system code', async () => {
    const url = await serve(() => undefined);
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const err = await sendRequest({ ...base, url }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'transient', detail: 'network error ECONNREFUSED' });
  });

  it("the caller's abort rejects with the signal's reason, not a service error", async () => {
    const url = await serve(() => undefined);
    const controller = new AbortController();
    const pending = sendRequest({ ...base, url, signal: controller.signal });
    const reason = new Error('cancelled by the workflow');
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });
});
