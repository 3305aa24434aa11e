/**
 * One delivery attempt against real HTTP servers on loopback (activities/events/http-post.ts and the
 * `deliverEvent` activity): a signed webhook request that the Standard Webhooks library verifies, and
 * each bad receiver's clear behaviour — refused, redirected elsewhere (not followed), hanging (abandoned at
 * the request's bound), slow but within it (delivered), throttled (its Retry-After kept) — and the
 * attempt that would wait past the delivery's deadline giving up instead of retrying.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { DeliveryAttemptError, postEvent } from '../../activities/events/http-post.ts';
import { createEventActivities, type DeliverEventInput } from '../../activities/events/event-activities.ts';
import { structuredJson, parseStructured } from '../../activities/events/cloud-event.ts';
import { eventId } from '../../activities/events/event-id.ts';
import { eventKey } from '../../activities/events/event-store.ts';
import { EVENTS_DEFAULTS, type EventsConfig, type StoredEvent } from '../../schemas/events.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import { storedAlert } from '../helpers/alert-event.ts';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A receiver on a free loopback port whose behaviour each test sets. */
async function receiver(): Promise<{ url: string; server: Server; set(h: Handler): void; got: string[] }> {
  let handler: Handler = (_req, _body, res) => res.writeHead(204).end();
  const got: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      got.push(`${req.method} ${req.url}`);
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, server, set: (h) => (handler = h), got };
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const ID = eventId({ type: 'callpipe.call.completed', subject: 'call-a', workflowId: 'wf', runId: 'run' });
const LINE = structuredJson({
  id: ID,
  type: 'callpipe.call.completed',
  source: 's3://out/results/',
  subject: 'call-a',
  time: '2026-11-26T07:00:00.000Z',
  data: { callId: 'call-a' },
});

/** One attempt of the `deliverEvent` activity, as Temporal would run it (attempt number from `info`). */
function attempt(
  activities: ReturnType<typeof createEventActivities>,
  info: { attempt: number } | undefined,
  input: DeliverEventInput,
): Promise<{ status: number }> {
  return new MockActivityEnvironment(info as never).run(activities.deliverEvent, input);
}

/** A store holding the one event line (the activity reads its claim check from it). */
function storeWith(key: string, text: string): ObjectStore {
  const objects = new Map([[key, text]]);
  const store = {
    bucket: 'out',
    getText: async (k: string) => {
      const v = objects.get(k);
      if (v === undefined) throw new Error(`no ${k}`);
      return v;
    },
    put: async (k: string, body: string) => void objects.set(k, body),
    withBucket: () => store,
  };
  return store as unknown as ObjectStore;
}

let a: Awaited<ReturnType<typeof receiver>>;
let b: Awaited<ReturnType<typeof receiver>>;

beforeAll(async () => {
  a = await receiver();
  b = await receiver();
});
afterEach(() => {
  a.set((_req, _body, res) => res.writeHead(204).end());
  a.got.length = 0;
  b.got.length = 0;
});
afterAll(() => {
  for (const s of [a.server, b.server]) {
    s.closeAllConnections();
    s.close();
  }
});

const key = eventKey({ bucket: 'out', prefix: 'results/' }, '2026-11-26T07:00:00.000Z', ID);
const event: StoredEvent = {
  id: ID,
  type: 'callpipe.call.completed',
  bucket: 'out',
  key,
  callId: 'call-a',
};
const config = (url: string, over: Partial<EventsConfig> = {}): EventsConfig => ({
  ...EVENTS_DEFAULTS,
  webhookUrls: [url],
  webhookSecret: secret,
  ...over,
});
const policy = { initialSeconds: 1, maxSeconds: 4, forSeconds: 3600, requestTimeoutSeconds: 2 };
const far = new Date(Date.now() + 3_600_000).toISOString();

describe('delivering an event: signed requests and redirects', () => {
  it('is a CloudEvent the Standard Webhooks library verifies, with the event id as webhook-id', async () => {
    let verified: unknown;
    let headers: IncomingMessage['headers'] = {};
    a.set((req, body, res) => {
      headers = req.headers;
      verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
      res.writeHead(200).end('ok');
    });
    const activities = createEventActivities({ store: storeWith(key, `${LINE}\n`), config: config(a.url) });
    const out = await attempt(activities, undefined, {
      event,
      sink: 'webhook:0',
      policy,
      deadline: far,
    });
    expect(out.status).toBe(200);
    expect(headers['webhook-id']).toBe(ID);
    expect(headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(verified).toMatchObject({
      specversion: '1.0',
      id: ID,
      type: 'callpipe.call.completed',
      subject: 'call-a',
    });
    // A wrong secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(LINE, {
        'webhook-id': ID,
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      }),
    ).toThrow();
  });

  it('fails an attempt clearly when the receiver refuses the connection', async () => {
    const closed = await receiver();
    closed.server.close();
    await expect(postEvent({ url: closed.url, body: LINE, headers: {}, timeoutMs: 2000 })).rejects.toThrow(
      /refused the connection/,
    );
  });

  it('does not follow a redirect to another host, and says where it pointed', async () => {
    a.set((_req, _body, res) =>
      res.writeHead(307, { location: b.url.replace('127.0.0.1', 'localhost') }).end(),
    );
    const err = await postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 2000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DeliveryAttemptError);
    expect((err as Error).message).toMatch(
      /redirected \(HTTP 307\) to another host \(localhost\): not followed/,
    );
    expect(b.got).toEqual([]);
  });

  it('follows a 307 on the same origin, and refuses one that would turn the POST into a GET', async () => {
    a.set((req, body, res) => {
      if (req.url === '/hook') res.writeHead(307, { location: '/moved' }).end();
      else res.writeHead(body === LINE ? 202 : 400).end();
    });
    await expect(postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 2000 })).resolves.toEqual({
      status: 202,
      redirects: 1,
    });
    a.set((_req, _body, res) => res.writeHead(302, { location: '/moved' }).end());
    await expect(postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 2000 })).rejects.toThrow(
      /HTTP 302: a redirect that would turn the POST into a GET/,
    );
  });
});

describe('delivering an event: slow receivers and retries', () => {
  it('abandons a receiver that never answers at the request’s bound', async () => {
    a.set(() => undefined); // never answers
    await expect(postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 300 })).rejects.toThrow(
      /no complete answer within 0.3 s/,
    );
  });

  it('delivers to a slow receiver that answers within the bound', async () => {
    a.set((_req, _body, res) => void setTimeout(() => res.writeHead(200).end(), 200));
    await expect(postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 5000 })).resolves.toMatchObject({
      status: 200,
    });
  });

  it('keeps a throttled receiver’s Retry-After for the next attempt', async () => {
    a.set((_req, _body, res) => res.writeHead(429, { 'retry-after': '3' }).end());
    const err = await postEvent({ url: a.url, body: LINE, headers: {}, timeoutMs: 2000 }).catch(
      (e: unknown) => e,
    );
    expect((err as DeliveryAttemptError).retryAfterMs).toBe(3000);
    expect((err as Error).message).toBe('answered HTTP 429');
  });

  it('retries an attempt while the deadline allows, then gives up with the attempts and the reason', async () => {
    a.set((_req, _body, res) => res.writeHead(500).end());
    // The activity's clock is fixed, so the deadlines below are an hour and half a second from its "now"
    // however long an attempt takes here.
    const now = new Date('2026-11-26T07:00:00.000Z');
    const activities = createEventActivities({
      store: storeWith(key, LINE),
      config: config(a.url),
      now: () => now,
    });
    const inAnHour = new Date(now.getTime() + 3_600_000).toISOString();
    const retried = await attempt(
      activities,
      { attempt: 1 },
      { event, sink: 'webhook:0', policy, deadline: inAnHour },
    ).catch((e: unknown) => e);
    expect(retried).toBeInstanceOf(ApplicationFailure);
    expect(retried).toMatchObject({ type: 'EventDeliveryFailed', nonRetryable: false });
    expect((retried as Error).message).toBe('webhook:0: answered HTTP 500');

    // Attempt 7 would wait the policy's 4 s: past a deadline half a second away, so it gives up.
    const soon = new Date(now.getTime() + 500).toISOString();
    const gaveUp = await attempt(
      activities,
      { attempt: 7 },
      { event, sink: 'webhook:0', policy, deadline: soon },
    ).catch((e: unknown) => e);
    expect(gaveUp).toMatchObject({ type: 'EventDeliveryGaveUp', nonRetryable: true });
    expect((gaveUp as ApplicationFailure).details).toEqual([{ attempts: 7, reason: 'answered HTTP 500' }]);
  });
});

describe('delivering an event: Slack', () => {
  it('sends Slack a message of the alert, not the CloudEvent', async () => {
    let body = '';
    a.set((_req, b2, res) => {
      body = b2;
      res.writeHead(200).end('ok');
    });
    const {
      id: alertId,
      key: alertKey,
      line,
    } = storedAlert(
      ['complaint', 'customer_harassment'],
      [
        { category: 'customer_harassment', severity: 'critical' },
        { category: 'complaint', severity: 'warning' },
      ],
    );
    const activities = createEventActivities({
      store: storeWith(alertKey, line),
      config: { ...EVENTS_DEFAULTS, slackUrl: a.url },
    });
    await attempt(activities, undefined, {
      event: { id: alertId, type: 'callpipe.call.alert', bucket: 'out', key: alertKey },
      sink: 'slack',
      policy,
      deadline: far,
    });
    const message = JSON.parse(body) as { text: string };
    expect(message.text).toContain(':rotating_light:');
    expect(message.text).toContain('customer_harassment (critical), complaint (warning)');
    expect(message.text).toContain('call `call-a` · 1 min 35 s');
    expect(parseStructured(line).id).toBe(alertId);
  });
});

describe('event ids', () => {
  it('are stable for a run’s event, differ by type, call and run, and hold no digit', () => {
    const base = { type: 'callpipe.call.completed', subject: 'call-a', workflowId: 'wf', runId: 'r1' };
    expect(eventId(base)).toBe(eventId({ ...base }));
    const others = [
      { ...base, type: 'callpipe.call.alert' },
      { ...base, subject: 'call-b' },
      { ...base, runId: 'r2' },
    ].map(eventId);
    expect(new Set([eventId(base), ...others]).size).toBe(4);
    for (const id of [eventId(base), ...others]) expect(id).toMatch(/^evt_[a-z]{26}$/);
  });

  it('name the event’s object by day under the output prefix', () => {
    expect(eventKey({ bucket: 'b', prefix: 'results' }, '2026-11-26T23:59:00.000Z', 'evt_abc')).toBe(
      'results/events/2026-11-26/evt_abc.ndjson',
    );
  });
});
