/**
 * Encrypted Temporal payloads on the real stack, whose workers run with the codec on (the stack's own
 * payload key, made in its home): a call's history read raw from the Temporal server by the `temporal`
 * CLI without any codec holds neither its source key nor a value of its manifest metadata, nor a
 * failure's message, and Temporal's database files hold none of them either; the same history read
 * through `callpipe codec-server` (the CLI's --codec-endpoint, as the Web UI reads it) shows them all.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording, type Submitted } from '../../cli/submit.ts';
import { startCodecServer } from '../../cli/commands/codec-server.ts';
import { EncryptionCodec, payloadKeysOf } from '../../workers/payload-codec.ts';
import { toolPaths } from '../../cli/tools/provision.ts';
import { stackConfig } from '../helpers/stack.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { decryptedHistoryJson } from '../helpers/histories.ts';
import { Worker } from '@temporalio/worker';
import { temporalDataConverter } from '../../workers/temporal-connection.ts';
import { runId } from '../helpers/run-id.ts';

const ARTIFACTS = fileURLToPath(new URL('../../.test-artifacts/', import.meta.url));

/** Text of a history as JSON, with every base64 string beside its decoded bytes as UTF-8. */
function searchable(json: string): string {
  const decoded: string[] = [];
  JSON.parse(json, (_k, v: unknown) => {
    if (typeof v === 'string' && v.length >= 8 && /^[A-Za-z0-9+/]+={0,2}$/.test(v))
      decoded.push(Buffer.from(v, 'base64').toString('utf8'));
    return v;
  });
  return `${json}\n${decoded.join('\n')}`;
}

/** Every failure in a history (events' `failure`, nested `cause`s), as the CLI prints them. */
function failures(json: string): { message?: string; encodedAttributes?: unknown }[] {
  const found: { message?: string; encodedAttributes?: unknown }[] = [];
  JSON.parse(json, (k, v: unknown) => {
    if ((k === 'failure' || k === 'cause') && v && typeof v === 'object') found.push(v as never);
    return v;
  });
  return found;
}

let dir: string;
let pc: PipelineClient;
let codecServer: Awaited<ReturnType<typeof startCodecServer>>;
const token = randomBytes(32).toString('base64url');
const run = runId();
// Values only this file's calls carry: a manifest's customer and caller, and the recordings' names.
const customer = `Codec Customer ${run}`;
const callerNumber = `0312${run.replace(/\D/g, '').padEnd(6, '7').slice(0, 6)}`;
let done: Submitted;
let failed: Submitted;

const show = (workflowId: string, codec: boolean) =>
  promisify(execFile)(
    toolPaths().temporal,
    [
      ...['workflow', 'show', '--workflow-id', workflowId, '--output', 'json'],
      ...['--address', pc.config.temporal.address, '--namespace', pc.config.temporal.namespace],
      ...(codec ? ['--codec-endpoint', codecServer.url, '--codec-auth', `Bearer ${token}`] : []),
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  ).then((r) => r.stdout);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-codec-'));
  const config = stackConfig();
  pc = await connectPipeline(config);
  const keys = payloadKeysOf(config.temporal);
  codecServer = await startCodecServer({
    codec: new EncryptionCodec(keys!),
    namespace: config.temporal.namespace,
    token,
    origins: [inject('stack').webUiUrl],
    port: 0,
  });
  const output = { bucket: pc.store.bucket, prefix: `codec-${run}/` };
  const metadata = { customer_name: customer, caller_number: callerNumber };

  const call = await makeCall(dir, `codec-${run}.wav`, { durationSeconds: 12, seed: 5 });
  done = await submitRecording(pc, await resolveSource(call.path, pc.store, pc.config), {
    output,
    metadata,
  });
  await done.handle.result();

  // Not a recording: its probe fails, with a message that names the recording.
  const brokenKey = `${pc.config.s3.inputPrefix}codec-${run}/broken-${run}.wav`;
  await pc.store.put(brokenKey, 'this is no audio at all\n'.repeat(100));
  const head = await pc.store.head(brokenKey);
  failed = await submitRecording(
    pc,
    { bucket: pc.store.bucket, key: brokenKey, etag: head?.etag, size: head?.size },
    { output, metadata },
  );
  await failed.handle.result().catch(() => undefined);
});

afterAll(async () => {
  await codecServer?.close();
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('encrypted payloads: ciphertext in Temporal, readable through the codec server: what Temporal holds', () => {
  it('keeps the stack key in its home, private, and out of the stack record', () => {
    const home = inject('stack').home;
    const keysFile = stackConfig().temporal.payloadKeysFile!;
    expect(keysFile).toBe(join(home, 'payload-keys'));
    expect(statSync(keysFile).mode & 0o777).toBe(0o600);
    const material = payloadKeysOf({ payloadKeysFile: keysFile })!.keys[0]!.key.toString('base64');
    expect(readFileSync(join(home, 'stack.json'), 'utf8')).not.toContain(material);
    expect(readFileSync(join(home, 'stack.json'), 'utf8')).toContain(keysFile);
  });

  it("holds no source key, manifest value or failure message in the raw history and Temporal's database", async () => {
    const values = [done.source.key, failed.source.key, customer, callerNumber];
    const raw = searchable(await show(done.workflowId, false));
    // What the search sees when it is there: the same history decoded (next test) holds every value.
    for (const value of values.slice(2)) expect(raw, value).not.toContain(value);
    expect(raw).not.toContain(done.source.key);
    expect(raw).toContain('binary/encrypted');

    const rawFailed = await show(failed.workflowId, false);
    expect(searchable(rawFailed)).not.toContain(failed.source.key);
    expect(searchable(rawFailed)).not.toContain(customer);
    const messages = failures(rawFailed).filter((f) => f.encodedAttributes);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((f) => f.message === 'Encoded failure')).toBe(true);

    const db = join(inject('stack').home, 'temporal.sqlite');
    const files = [db, `${db}-wal`].filter((f) => existsSync(f));
    const bytes = Buffer.concat(files.map((f) => readFileSync(f))).toString('latin1');
    for (const value of values) expect(bytes, value).not.toContain(Buffer.from(value).toString('latin1'));
  });

  it('shows them all through the codec server', async () => {
    const decoded = searchable(await show(done.workflowId, true));
    expect(decoded).toContain(done.source.key);
    expect(decoded).toContain(customer);
    expect(decoded).toContain(callerNumber);
    expect(decoded).not.toContain('binary/encrypted');

    const decodedFailed = await show(failed.workflowId, true);
    expect(searchable(decodedFailed)).toContain(failed.source.key);
    // The failure's real message, decoded from its encrypted attributes.
    const reasons = failures(decodedFailed)
      .filter((f) => f.encodedAttributes)
      .map((f) => searchable(JSON.stringify(f.encodedAttributes)));
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons.join('\n')).toMatch(/"message"\s*:\s*"(?!Encoded failure)[^"]+"/);
  });
});

describe('encrypted payloads: ciphertext in Temporal, readable through the codec server: replay and the Web UI', () => {
  it('replays: encrypted with the codec, and decrypted as a recorded fixture without it', async () => {
    const bundle = { workflowBundle: { codePath: inject('workflowBundlePath') } };
    for (const workflowId of [done.workflowId, failed.workflowId]) {
      const raw = await show(workflowId, false);
      await Worker.runReplayHistory(
        { ...bundle, dataConverter: temporalDataConverter(pc.config.temporal) },
        JSON.parse(raw) as object,
        workflowId,
      );
      const fixture = decryptedHistoryJson(raw, pc.config.temporal);
      expect(fixture).not.toContain(Buffer.from('binary/encrypted').toString('base64'));
      await Worker.runReplayHistory(bundle, JSON.parse(fixture) as object, workflowId);
    }
  });

  it('shows the decoded input in the Web UI through the codec server, and ciphertext without it', async () => {
    const browser = await launchBrowser();
    try {
      const { webUiUrl, namespace } = inject('stack');
      const { runId } = await done.handle.describe();
      const url = `${webUiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(done.workflowId)}/${runId}/history`;
      // What the UI shows of the input without a codec: its encrypted data, in base64.
      const raw = JSON.parse(await show(done.workflowId, false)) as {
        events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[];
      };
      const cipher = raw.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!.data.slice(
        0,
        24,
      );
      const bodyOf = async (endpoint: string | undefined, until: string) => {
        const context = await browser.newContext({ viewport: { width: 1600, height: 1200 } });
        const page = await context.newPage();
        // The UI's "Codec Server" settings as it saves them in local storage: this browser's endpoint
        // over the server's (which has none).
        if (endpoint)
          await page.addInitScript((value) => {
            window.localStorage.setItem('endpoint', JSON.stringify(value));
            window.localStorage.setItem('overrideRemoteCodecConfiguration', 'true');
          }, endpoint);
        await page.goto(url, { waitUntil: 'domcontentloaded' });
        const body = page.locator('body');
        await expect.poll(() => body.innerText(), { timeout: 60_000 }).toContain(until);
        const text = await body.innerText();
        if (endpoint) {
          mkdirSync(ARTIFACTS, { recursive: true });
          await page.screenshot({ path: join(ARTIFACTS, 'web-ui-codec.png'), fullPage: true });
        }
        await context.close();
        return text;
      };
      const plain = await bodyOf(undefined, cipher);
      expect(plain).not.toContain(customer);
      expect(plain).not.toContain(done.source.key);
      const decoded = await bodyOf(`${codecServer.url}/${token}`, customer);
      expect(decoded).toContain(done.source.key);
      expect(decoded).not.toContain(cipher);
    } finally {
      await browser.close();
    }
  });
});
