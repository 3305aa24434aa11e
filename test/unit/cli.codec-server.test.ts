/**
 * `callpipe codec-server` over real HTTP: Temporal's codec server protocol (POST /decode and /encode with
 * `{payloads}` in JSON, X-Namespace), a bearer token required (header, or the endpoint's first path
 * segment for a Web UI that cannot add headers), CORS answered for the Web UI's origin only.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { startCodecServer } from '../../cli/commands/codec-server.ts';
import { EncryptionCodec, KEY_ID_METADATA, parsePayloadKeys } from '../../workers/payload-codec.ts';

const TOKEN = randomBytes(32).toString('base64url');
const UI = 'http://127.0.0.1:8233';
const keys = parsePayloadKeys(`k1:${randomBytes(32).toString('base64')}`, 'CALLPIPE_PAYLOAD_KEYS');
const codec = new EncryptionCodec(keys);
const INPUT = { sourceKey: 'input/09012345678.wav', metadata: { customer_name: '山田太郎' } };

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

let server: Awaited<ReturnType<typeof startCodecServer>>;
beforeAll(async () => {
  server = await startCodecServer({ codec, namespace: 'default', token: TOKEN, origins: [UI], port: 0 });
});
afterAll(() => server?.close());

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}
const auth = { authorization: `Bearer ${TOKEN}` };

describe('callpipe codec-server', () => {
  it('decodes what the workers encrypted, and encodes what the codec decrypts', async () => {
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(INPUT)]);
    const decoded = await post('/decode', { payloads: [toJson(encrypted!)] }, auth);
    expect(decoded.status).toBe(200);
    const { payloads } = (await decoded.json()) as { payloads: Parameters<typeof fromJson>[0][] };
    expect(defaultPayloadConverter.fromPayload(fromJson(payloads[0]!))).toEqual(INPUT);

    const encoded = await post('/encode', { payloads }, auth);
    expect(encoded.status).toBe(200);
    const back = ((await encoded.json()) as { payloads: Parameters<typeof fromJson>[0][] }).payloads[0]!;
    expect(Buffer.from(back.metadata[KEY_ID_METADATA]!, 'base64').toString()).toBe('k1');
    expect(JSON.stringify(back)).not.toContain(Buffer.from(JSON.stringify(INPUT)).toString('base64'));
    const [again] = await codec.decode([fromJson(back)]);
    expect(defaultPayloadConverter.fromPayload(again!)).toEqual(INPUT);
  });

  it('refuses a request without the token, or with another, and decodes nothing for it', async () => {
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload(INPUT)]);
    const body = { payloads: [toJson(encrypted!)] };
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const res = await post('/decode', body, headers);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('山田');
    }
    expect((await post('/wrong-token/decode', body)).status).toBe(401);
    // The Web UI's form: the token as the endpoint's first path segment.
    expect((await post(`/${TOKEN}/decode`, body)).status).toBe(200);
  });

  it("answers the Web UI's CORS preflight, and no other origin", async () => {
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-namespace');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

    const fromUi = await post('/decode', { payloads: [] }, { ...auth, origin: UI });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI);

    const elsewhere = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
    expect((await post('/decode', { payloads: [] }, { ...auth, origin: 'http://evil.example' })).status).toBe(
      403,
    );
  });

  it('refuses another namespace, a bad body, and names only the key id of a payload it cannot open', async () => {
    expect((await post('/decode', { payloads: [] }, { ...auth, 'x-namespace': 'other' })).status).toBe(403);
    expect((await post('/decode', { nope: 1 }, auth)).status).toBe(400);
    const stranger = new EncryptionCodec(
      parsePayloadKeys(`k9:${randomBytes(32).toString('base64')}`, 'other'),
    );
    const [foreign] = await stranger.encode([defaultPayloadConverter.toPayload(INPUT)]);
    const res = await post('/decode', { payloads: [toJson(foreign!)] }, auth);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain('"k9"');
    expect(error).not.toMatch(/[A-Za-z0-9+/]{40,}/);
  });
});
