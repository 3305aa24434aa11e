/**
 * A small client of the emulator for its contract tests: node:http with keep-alive (light enough for 64
 * concurrent sessions), a cookie jar per stream session, and helpers for tokens and text analysis.
 */
import { Agent, request } from 'node:http';
import type { RunningEmulator } from '../../emulator/server.ts';

export const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json: unknown;
}

export function post(
  url: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'Content-Length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          const text = buf.toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  return res.json();
}

export async function token(
  emu: RunningEmulator,
  clientId = emu.clientId,
  clientSecret = emu.clientSecret,
): Promise<string> {
  const res = await post(
    emu.authUrl,
    JSON.stringify({ grantType: 'client_credentials', clientId, clientSecret }),
    {
      'Content-Type': 'application/json',
    },
  );
  if (res.status !== 201) throw new Error(`token: ${res.status} ${res.text}`);
  return (res.json as { access_token: string }).access_token;
}

export function nlp(
  emu: RunningEmulator,
  path: string,
  body: unknown,
  accessToken: string,
  base = emu.baseUrl,
) {
  return post(`${base}${path}`, typeof body === 'string' ? body : JSON.stringify(body), {
    'Content-Type': 'application/json;charset=UTF-8',
    Authorization: `Bearer ${accessToken}`,
  });
}

export interface Msg {
  msg: { msgname: string; uniqueId: string; cause?: string };
  timeinfo?: { startDetectTime?: number; endDetectTime?: number };
  result?: {
    type: number;
    sentence: { surface: string; score: number; startTime: number; endTime: number; reading?: string }[];
  };
  errorinfo?: { code: number; message: string; level: string; detail: string };
}

export function startBody(param: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { msg: { msgname: 'start' }, param, ...extra };
}

export const MULAW_8K = {
  'baseParam.samplingRate': 8000,
  'baseParam.audioCodec': 'mulaw',
  'recognizeParameter.domainId': 'cpdomain',
};

/** One stream session: start, audio, stop, cancel, with the cookie jar a real client keeps. */
export class StreamClient {
  uniqueId = '';
  jar = new Map<string, string>();
  url: string;

  readonly emu: RunningEmulator;
  readonly accessToken: string;
  readonly model;
  constructor(emu: RunningEmulator, accessToken: string, model = 'ja-gen_tf-08') {
    this.emu = emu;
    this.accessToken = accessToken;
    this.model = model;
    this.url = `${emu.baseUrl}/asr/v1/speech_recognition/${model}`;
  }

  private keep(res: HttpAnswer): void {
    const set = res.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }

  cookieHeader(): string {
    return [...this.jar.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async start(
    param: Record<string, unknown> = MULAW_8K,
    extra: Record<string, unknown> = {},
  ): Promise<HttpAnswer> {
    const res = await post(this.url, JSON.stringify(startBody(param, extra)), {
      'Content-Type': 'application/json; charset=UTF-8',
      Authorization: `Bearer ${this.accessToken}`,
    });
    this.keep(res);
    if (res.status === 200) this.uniqueId = (res.json as Msg[])[0]!.msg.uniqueId;
    return res;
  }

  private headers(contentType: string, override: Record<string, string> = {}) {
    return {
      'Content-Type': contentType,
      'Unique-ID': this.uniqueId,
      Authorization: `Bearer ${this.accessToken}`,
      Cookie: this.cookieHeader(),
      ...override,
    };
  }

  async audio(chunk: Buffer, override: Record<string, string> = {}): Promise<HttpAnswer> {
    const res = await post(this.url, chunk, this.headers('application/octet-stream', override));
    this.keep(res);
    return res;
  }

  async command(msgname: string, override: Record<string, string> = {}): Promise<HttpAnswer> {
    const res = await post(
      this.url,
      JSON.stringify({ msg: { msgname } }),
      this.headers('application/json; charset=UTF-8', override),
    );
    this.keep(res);
    return res;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StreamRun {
  messages: Msg[];
  statuses: number[];
  errors: Msg[];
}

/**
 * Streams audio in chunks paced at real time × speed on an absolute schedule (a late chunk does not push
 * the next ones back), then stops. Collects every message.
 *
 * The schedule starts when the first chunk's answer is back, not before it is sent: the emulator measures
 * real time from that chunk's arrival, so however long a loaded machine takes to deliver it, every later
 * chunk arrives at most two chunks ahead of the emulator's own clock, inside its 2-s buffer. A client
 * paced this way can never earn a pacing 412, whatever the machine's speed.
 */
export async function streamAudio(
  client: StreamClient,
  audio: Buffer,
  options: { chunkBytes: number; bytesPerSecond: number; speed: number; pace?: boolean },
): Promise<StreamRun> {
  const run: StreamRun = { messages: [], statuses: [], errors: [] };
  let begin: number | undefined;
  let firstBytes = 0;
  let sent = 0;
  for (let offset = 0; offset < audio.length; offset += options.chunkBytes) {
    if (options.pace !== false && begin !== undefined) {
      const due = begin + (((sent - firstBytes) / options.bytesPerSecond) * 1000) / options.speed;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
    }
    const chunk = audio.subarray(offset, offset + options.chunkBytes);
    const res = await client.audio(chunk);
    if (begin === undefined) {
      begin = performance.now();
      firstBytes = chunk.length;
    }
    sent += chunk.length;
    run.statuses.push(res.status);
    if (res.status === 200) run.messages.push(...(res.json as Msg[]));
    else if (res.status !== 204) {
      run.errors.push(...((res.json as Msg[] | undefined) ?? []));
      return run;
    }
  }
  const res = await client.command('stop');
  run.statuses.push(res.status);
  if (res.status === 200) run.messages.push(...(res.json as Msg[]));
  else run.errors.push(...((res.json as Msg[] | undefined) ?? []));
  return run;
}

export function finals(messages: Msg[]) {
  return messages
    .filter((m) => m.msg.msgname === 'recognized' && m.result?.type === 1)
    .map((m) => m.result!.sentence[0]!);
}

/** The test accounts of text-analysis contract tests: the local Enterprise account and a Developers one. */
export const TEXT_TEST_ACCOUNTS = [
  {
    clientId: 'callpipe-local',
    clientSecret: 'callpipe-local-secret',
    kind: 'Enterprise' as const,
    rateLimit: null,
  },
  { clientId: 'dev', clientSecret: 'dev-secret', kind: 'Developers' as const, rateLimit: null },
];

/** A service client configuration for a running emulator (its account, the 8-kHz model, speed 1). */
export function serviceConfigOf(emu: RunningEmulator) {
  return {
    baseUrl: emu.baseUrl,
    authUrl: emu.authUrl,
    clientId: emu.clientId,
    clientSecret: emu.clientSecret,
    model: 'ja-gen_tf-08',
    domainId: emu.domainId,
    speed: 1,
  };
}
