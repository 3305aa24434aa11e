/**
 * Secrets and personal data stay out of everything we write (docs/design.md: "Secrets and customers' personal
 * data never enter workflow arguments, history, search attributes, logs or metrics"; issue 7 item 5,
 * issue 15 item 3). The call is one in which a customer gives personal data (test/helpers/personal-data.ts). The emulator sees the client secret and tokens on the wire; our
 * files must not: the workers' log, workflow histories fetched from the server, result.json, error.json,
 * batch reports, and the failure of a call whose credentials are wrong. Output keys stay under the
 * output prefix (the unit side: test/unit/security.call-id.test.ts).
 *
 * Access tokens are random per issue, so the ones our workers received are captured by a small proxy in
 * front of the token endpoint (in-process workers on a unique task-queue prefix use it); for the stack's
 * own workers, whose tokens we cannot see, the checks are the secret, `Bearer ` and `access_token`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import { slowestPace } from '../../schemas/call-spec.ts';
import { taskQueues, type Config } from '../../schemas/config.ts';
import { inProcessWorkers, uniquePrefix, withPrefix, type GeneratedCall } from '../helpers/pipeline.ts';
import { personalDataCall, personalDataIn } from '../helpers/personal-data.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { stackConfig } from '../helpers/stack.ts';
import { decryptPayloads } from '../helpers/histories.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import { runId } from '../helpers/run-id.ts';

/** JSON of anything, with byte fields (payloads) decoded as UTF-8 so their text can be searched. */
function searchable(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : typeof v === 'bigint' ? String(v) : v,
  );
}

/** What must never appear in our files: secrets, tokens, and the call's personal data. */
function leaks(text: string, secrets: string[]): string[] {
  const found = secrets.filter((s) => s && text.includes(s)).map((s) => `secret/token ${s.slice(0, 4)}…`);
  if (/bearer\s+[A-Za-z0-9._~+/-]{8,}/i.test(text)) found.push('a Bearer credential');
  if (/"access_?token"\s*:\s*"[^"[]/i.test(text)) found.push('an access_token field');
  found.push(...personalDataIn(text).map((v) => `personal data ${[...v].slice(0, 2).join('')}…`));
  return found;
}

/** The unredacted copy of a result (written only where configured) is where personal data may be. */
function isUnredactedCopy(document: string): boolean {
  try {
    return (JSON.parse(document) as { redaction?: { applied?: boolean } }).redaction?.applied === false;
  } catch {
    return false;
  }
}

/** Captures `stderr` (where in-process workers log) while `work` runs. */
async function captureStderr<T>(work: () => Promise<T>): Promise<{ value: T; output: string }> {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    return { value: await work(), output: chunks.join('') };
  } finally {
    process.stderr.write = write;
  }
}

/** A pass-through proxy of the token endpoint that remembers every access token it hands out. */
async function tokenRecorder(target: string): Promise<{ url: string; tokens: string[]; close: () => void }> {
  const tokens: string[] = [];
  const server: Server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      void (async () => {
        const upstream = await fetch(target, {
          method: req.method,
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          body: req.method === 'GET' ? undefined : Buffer.concat(body),
        });
        const text = await upstream.text();
        const token = /"access_token"\s*:\s*"([^"]+)"/.exec(text)?.[1];
        if (token) tokens.push(token);
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
        res.end(text);
      })().catch((err: unknown) => {
        res.writeHead(502);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/token`, tokens, close: () => server.close() };
}

let dir: string;
let pc: PipelineClient;
let call: GeneratedCall;
let secret: string;
const run = runId();
/** Workflow ids processed by this file, beside whatever the shared stack ran before it. */
const ours: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-security-'));
  pc = await connectPipeline(stackConfig());
  secret = pc.config.service.clientSecret;
  // A call in which a customer gives a name, numbers, an address and an e-mail address.
  const path = join(dir, 'secure-call.wav');
  const { script } = personalDataCall();
  await renderFixture(script, path);
  call = { path, script };
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A history as an operator reads it through the codec server: its payloads decrypted. */
async function historyText(workflowId: string): Promise<string> {
  const history = await pc.client.workflow.getHandle(workflowId).fetchHistory();
  return searchable(decryptPayloads(history, pc.config.temporal));
}

/** Runs the call through workers of this process with `service` overrides; stderr captured. */
async function runInProcess(label: string, service: Partial<Config['service']>) {
  const config = withPrefix(stackConfig(), uniquePrefix(label), service);
  const workers = await inProcessWorkers(config);
  try {
    return await captureStderr(async () => {
      const source = await resolveSource(call.path, pc.store, pc.config);
      const submitted = await submitRecording(pc, source, {
        output: { bucket: pc.store.bucket, prefix: `security-${run}/${label}/` },
        redo: true,
        extra: { queues: taskQueues(config), pacingSpeed: slowestPace(pc.config.service.speed) },
      });
      ours.push(submitted.workflowId);
      const result: ProcessRecordingResult = await submitted.handle.result();
      return { submitted, result };
    });
  } finally {
    await workers.stop();
  }
}

describe('secrets and output keys: secrets in failures and tokens', () => {
  it('a call with a wrong client secret fails with an auth reason that holds neither secret', async () => {
    const wrong = `wrong-secret-${randomUUID()}`;
    const { value, output } = await runInProcess('wrong-secret', { clientSecret: wrong });
    const { result, submitted } = value;
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/auth|credential|token|401|99998/i);
    expect(leaks(result.reason!, [wrong, secret])).toEqual([]);
    const errorDoc = await pc.store.getText(result.errorKey!);
    expect(leaks(errorDoc, [wrong, secret])).toEqual([]);
    const history = await historyText(submitted.workflowId);
    // The search reads the payloads: the call's own id and the auth reason are in there as text.
    expect(history).toContain(submitted.callId);
    expect(history).toContain(result.reason!.slice(0, 30));
    expect(leaks(history, [wrong, secret])).toEqual([]);
    expect(leaks(output, [wrong, secret])).toEqual([]);
    console.log(`wrong secret: failed at ${result.stage}: ${result.reason}`);
  });

  it('the access tokens our workers received appear in no history, result or log of ours', async () => {
    const recorder = await tokenRecorder(pc.config.service.authUrl);
    try {
      const { value, output } = await runInProcess('tokens', { authUrl: recorder.url });
      const { result, submitted } = value;
      expect(result.status, result.reason).toBe('done');
      expect(recorder.tokens.length).toBeGreaterThan(0);
      const secrets = [secret, ...recorder.tokens];
      expect(leaks(await historyText(submitted.workflowId), secrets)).toEqual([]);
      expect(leaks(await pc.store.getText(result.resultKey!), secrets)).toEqual([]);
      expect(leaks(output, secrets)).toEqual([]);
    } finally {
      recorder.close();
    }
  });
});

describe("secrets and output keys: the stack's workers", () => {
  it("the stack's workers: a call processed, then its log, every history on the server and every result hold no secret", async () => {
    // A token of the same account, fetched as the workers do: if tokens were ever logged whole, this
    // is their shape. (The workers' own tokens are random per issue and not visible from here.)
    const response = await fetch(pc.config.service.authUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grantType: 'client_credentials',
        clientId: pc.config.service.clientId,
        clientSecret: secret,
      }),
    });
    const ownToken = ((await response.json()) as { access_token?: string }).access_token;
    expect(ownToken).toBeTruthy();

    const source = await resolveSource(call.path, pc.store, pc.config);
    const submitted = await submitRecording(pc, source, {
      output: { bucket: pc.store.bucket, prefix: `security-${run}/stack/` },
      redo: true,
    });
    ours.push(submitted.workflowId);
    const result = await submitted.handle.result();
    expect(result.status, result.reason).toBe('done');

    const workersLog = readFileSync(join(inject('stack').home, 'logs', 'workers.log'), 'utf8');
    // The right file: the stack's workers' JSON log, recognition worker included.
    expect(workersLog).toMatch(/"taskQueue":"callpipe-asr"/);
    expect(leaks(workersLog, [secret, ownToken!])).toEqual([]);

    // Every workflow the shared stack has run so far in this test run (other files' too), capped.
    const ids = new Set(ours);
    for await (const w of pc.client.workflow.list({ query: `ExecutionStatus != 'Running'` })) {
      ids.add(w.workflowId);
      if (ids.size >= 300) break;
    }
    for (const id of ids) {
      expect(leaks(await historyText(id), [secret, ownToken!]), id).toEqual([]);
    }

    // Every result, error and report document in the bucket (capped), read and searched.
    const documents: string[] = [];
    let next: string | undefined;
    do {
      const page = await pc.store.listPage('', next);
      documents.push(
        ...page.objects
          .map((o) => o.key)
          .filter((k) => /(^|\/)(result|error|report)\.json$|report\.csv$/.test(k)),
      );
      next = page.next;
    } while (next && documents.length < 400);
    expect(documents.length).toBeGreaterThan(0);
    console.log(`searched ${ids.size} histories and ${Math.min(documents.length, 400)} documents`);
    for (const key of documents.slice(0, 400)) {
      const document = await pc.store.getText(key);
      if (isUnredactedCopy(document)) continue;
      expect(leaks(document, [secret, ownToken!]), key).toEqual([]);
    }
  });
});

describe('secrets and output keys: output keys', () => {
  it("an object key with '../' and an absolute-looking key write only under the output prefix", async () => {
    const output = { bucket: pc.store.bucket, prefix: `security-${run}/keys/` };
    // The absolute-looking key is stored (the local store drops the leading '/'); the `../` one is
    // refused by the store, and the call still fails inside the prefix.
    const absolute = `/security-${run}/in/abs.wav`;
    await pc.store.putFile(absolute, call.path);
    const sources = [
      { bucket: pc.store.bucket, key: absolute },
      { bucket: pc.store.bucket, key: `security-${run}/in/../../../escape/x.wav` },
    ];
    for (const source of sources) {
      const head = await pc.store.head(source.key).catch(() => undefined);
      const submitted = await submitRecording(
        pc,
        { ...source, ...(head ? { etag: head.etag, size: head.size } : {}) },
        { output },
      );
      ours.push(submitted.workflowId);
      const result = await submitted.handle.result();
      const written = result.resultKey ?? result.errorKey!;
      expect(written.startsWith(`${output.prefix}${result.callId}/`), written).toBe(true);
      expect(written.split('/')).not.toContain('..');
    }
    // Nothing appeared outside: no `escape/` object anywhere near.
    expect((await pc.store.listPage('escape/')).objects).toEqual([]);
    expect((await pc.store.listPage(`security-${run}/escape/`)).objects).toEqual([]);
  });
});
