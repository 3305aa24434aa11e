/** A tiny HTTP server of the unit tests' own, on 127.0.0.1 port 0: scripted answers, recorded requests. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceConfig } from '../../schemas/config.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export interface FakeAnswer {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: unknown;
  delayMs?: number;
}

export type FakeHandler = (req: RecordedRequest, all: RecordedRequest[]) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far (keep-alive reuse shows as few connections for many requests). */
  connections(): number;
  close(): Promise<void>;
}

export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(parts),
        at: performance.now(),
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded, requests)).then(async (answer) => {
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
        if (answer.body === undefined) {
          res.statusCode = answer.status;
          res.end();
          return;
        }
        const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/json;charset=utf-8');
        res.statusCode = answer.status;
        res.end(text);
      });
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const TEST_SECRET = 'top-secret-client-secret';
export const TEST_TOKEN = 'access-token-value-xyz';

/** A config pointing every family at the fake server. */
export function fakeConfig(url: string, overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    baseUrl: `${url}/api/dev`,
    authUrl: `${url}/v1/oauth/accesstokens`,
    clientId: 'client-id',
    clientSecret: TEST_SECRET,
    model: 'ja-gen_tf-08',
    domainId: 'abcd1234',
    speed: 1,
    ...overrides,
  };
}

/** The token answer as the real service gave it: 201, numbers as strings. */
export function tokenAnswer(token = TEST_TOKEN, expiresIn = '86399'): FakeAnswer {
  return {
    status: 201,
    body: {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      scope: '',
      issued_at: String(Date.now()),
    },
  };
}
