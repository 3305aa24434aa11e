import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendRequest } from '../../service/http.ts';

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('sendRequest: each URL parsed once, every part of it sent', () => {
  it('sends the path and query string, credentials in the URL as Basic auth, the same on a second request', async () => {
    const seen: { url?: string; auth?: string }[] = [];
    server = http.createServer((req, res) => {
      seen.push({ url: req.url, auth: req.headers.authorization });
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const request = (url: string) =>
      sendRequest({ url, endpoint: '/x', family: 'nlp', headers: {}, method: 'GET' });
    const withQuery = `http://127.0.0.1:${port}/api/dev/nlp/v1/x?lang=ja&n=2`;
    for (let i = 0; i < 2; i++) expect((await request(withQuery)).status).toBe(204);
    await request(`http://user:p%40ss@127.0.0.1:${port}/auth`);
    expect(seen).toEqual([
      { url: '/api/dev/nlp/v1/x?lang=ja&n=2', auth: undefined },
      { url: '/api/dev/nlp/v1/x?lang=ja&n=2', auth: undefined },
      { url: '/auth', auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
    ]);
  });

  it('refuses a scheme it cannot send', async () => {
    await expect(
      sendRequest({ url: 'ftp://127.0.0.1/x', endpoint: '/x', family: 'nlp', headers: {} }),
    ).rejects.toThrow(/unsupported URL scheme ftp:/);
  });
});
