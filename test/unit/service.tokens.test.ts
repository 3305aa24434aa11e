import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServiceClient } from '../../service/client.ts';
import { CostMeter } from '../../service/cost.ts';
import { ServiceError } from '../../service/errors.ts';
import { Credentials, TokenProvider, withToken } from '../../service/tokens.ts';
import {
  fakeConfig,
  startFakeServer,
  TEST_SECRET,
  TEST_TOKEN,
  tokenAnswer,
  type FakeServer,
} from './service.fake-server.ts';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function provider(url: string, now?: () => number): TokenProvider {
  return new TokenProvider({
    authUrl: `${url}/v1/oauth/accesstokens`,
    credentials: new Credentials('client-id', TEST_SECRET),
    now,
  });
}

describe('TokenProvider', () => {
  it('sends the client-credentials body of spec 01 and reads the string fields of the recorded answer', async () => {
    server = await startFakeServer(() => tokenAnswer());
    const tokens = provider(server.url);
    const token = await tokens.get();
    expect(token.value.reveal()).toBe(TEST_TOKEN);
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({
      grantType: 'client_credentials',
      clientId: 'client-id',
      clientSecret: TEST_SECRET,
    });
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    expect(token.expiresAt - Date.now()).toBeGreaterThan(86_000_000);
  });

  it('single-flight: 50 concurrent callers cause one token request', async () => {
    server = await startFakeServer(() => ({ ...tokenAnswer(), delayMs: 50 }));
    const tokens = provider(server.url);
    const all = await Promise.all(Array.from({ length: 50 }, () => tokens.get()));
    expect(server.requests).toHaveLength(1);
    expect(new Set(all).size).toBe(1);
  });

  it('refreshes before expiry: in the background while valid, blocking once expired', async () => {
    let clock = 1_000_000;
    let n = 0;
    server = await startFakeServer(() => tokenAnswer(`tok-${++n}`, '100'));
    const tokens = provider(server.url, () => clock);
    expect((await tokens.get()).value.reveal()).toBe('tok-1');
    clock += 40_000; // before the refresh point (half of 100 s for short tokens)
    expect((await tokens.get()).value.reveal()).toBe('tok-1');
    expect(server.requests).toHaveLength(1);
    clock += 20_000; // past the refresh point, still valid: served at once, refreshed behind
    expect((await tokens.get()).value.reveal()).toBe('tok-1');
    // The refresh behind is a real request: waited for, not given a time it must finish in; asking
    // meanwhile serves the valid token and starts no second refresh.
    await vi.waitFor(async () => expect((await tokens.get()).value.reveal()).toBe('tok-2'), {
      timeout: 30_000,
      interval: 10,
    });
    expect(server.requests).toHaveLength(2);
    clock += 200_000; // expired: the caller waits for a new one
    expect((await tokens.get()).value.reveal()).toBe('tok-3');
  });

  it('bad credentials are an auth error (the recorded 401)', async () => {
    server = await startFakeServer(() => ({
      status: 401,
      body: { result: {}, message: 'An error has occurred.', status: 401 },
    }));
    const err = (await provider(server.url)
      .get()
      .catch((e: unknown) => e)) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.kind).toBe('auth');
    expect(err.httpStatus).toBe(401);
    expect(err.message).not.toContain(TEST_SECRET);
  });

  it('a token response without access_token is invalid, naming the field', async () => {
    server = await startFakeServer(() => ({ status: 201, body: { expires_in: '10' } }));
    const err = (await provider(server.url)
      .get()
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.kind).toBe('invalid');
    expect(err.detail).toContain('access_token');
  });
});

describe('withToken: refresh once on 99998 / 401, then auth error', () => {
  it('a rejected token is refreshed once and the call repeated', async () => {
    let n = 0;
    server = await startFakeServer(() => tokenAnswer(`tok-${++n}`));
    const tokens = provider(server.url);
    const meter = new CostMeter();
    const seen: string[] = [];
    const result = await withToken(tokens, meter, async (token) => {
      seen.push(token.value.reveal());
      if (seen.length === 1)
        throw new ServiceError({ kind: 'auth', message: 'x', code: 99998, httpStatus: 200 });
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(seen).toEqual(['tok-1', 'tok-2']);
    expect(meter.retries).toBe(1);
  });

  it('a second rejection fails with an auth error that says what to check', async () => {
    server = await startFakeServer(() => tokenAnswer());
    const tokens = provider(server.url);
    let calls = 0;
    const err = (await withToken(tokens, new CostMeter(), async () => {
      calls += 1;
      throw new ServiceError({ kind: 'auth', message: 'x', httpStatus: 401, endpoint: '/nlp/v1/sentiment' });
    }).catch((e: unknown) => e)) as ServiceError;
    expect(calls).toBe(2);
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/check the client id and secret/);
    expect(server.requests).toHaveLength(2);
  });

  it('concurrent rejections of the same token cost one refresh', async () => {
    let n = 0;
    server = await startFakeServer(() => tokenAnswer(`tok-${++n}`));
    const tokens = provider(server.url);
    await tokens.get();
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withToken(tokens, new CostMeter(), async (token) => {
          if (token.value.reveal() === 'tok-1')
            throw new ServiceError({ kind: 'auth', message: 'x', code: 99998 });
          return token.value.reveal();
        }),
      ),
    );
    expect(server.requests).toHaveLength(2);
  });

  it('other errors are not retried', async () => {
    server = await startFakeServer(() => tokenAnswer());
    let calls = 0;
    const err = await withToken(provider(server.url), new CostMeter(), async () => {
      calls += 1;
      throw new ServiceError({ kind: 'rateLimited', message: 'x', code: 99997 });
    }).catch((e: unknown) => e);
    expect((err as ServiceError).kind).toBe('rateLimited');
    expect(calls).toBe(1);
  });
});

describe('secrets never serialized', () => {
  it('credentials, tokens, the provider and the client redact', async () => {
    server = await startFakeServer(() => tokenAnswer());
    const client = createServiceClient(fakeConfig(server.url));
    const token = await client.tokens.get();
    const creds = new Credentials('client-id', TEST_SECRET);
    for (const thing of [creds, token, client.tokens, client]) {
      const text = `${JSON.stringify(thing)} ${inspect(thing, { depth: 10, showHidden: true })} ${String(thing)}`;
      expect(text).not.toContain(TEST_SECRET);
      expect(text).not.toContain(TEST_TOKEN);
    }
    expect(JSON.stringify(creds)).toContain('[redacted]');
    expect(JSON.stringify(token)).toContain('[redacted]');
  });

  it('errors of a call carry neither the secret nor the token', async () => {
    server = await startFakeServer((req) =>
      req.path.includes('oauth')
        ? tokenAnswer()
        : { status: 401, body: { status: 99998, message: 'Authentication Error' } },
    );
    const client = createServiceClient(fakeConfig(server.url));
    const err = await client.nlp.sentiment('よい天気です。').catch((e: unknown) => e);
    expect((err as ServiceError).kind).toBe('auth');
    const text = `${JSON.stringify(err)} ${inspect(err, { depth: 10 })} ${(err as Error).stack}`;
    expect(text).not.toContain(TEST_SECRET);
    expect(text).not.toContain(TEST_TOKEN);
    expect((err as ServiceError).cost?.requests).toBe(4); // token, call, token, call
  });
});
