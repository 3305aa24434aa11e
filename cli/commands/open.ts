/**
 * `callpipe open <callId | batchId>`: a call's page (with its recording, so the player works) or a
 * batch's night report (with its calls' pages, so its links work), copied from S3 into a local folder
 * that keeps the bucket's layout, then opened in the default browser. The pages need no server.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { CliError, parseCommandArgs } from '../command.ts';
import { childEnv } from '../../schemas/child-env.ts';
import { pipelineConfig } from '../stack-client.ts';
import { outputLocation } from '../submit.ts';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';
import {
  assertSafeCallId,
  batchReportKeys,
  batchReportPrefix,
  callOutputKeys,
  KeyError,
} from '../../schemas/call-keys.ts';
import type { BatchReport } from '../../activities/backfill/report.ts';

export const summary = "opens a call's page or a batch's night report in the browser";
export const help = `Usage: callpipe open <callId | batchId> [--out s3://bucket/prefix] [--no-audio] [--no-browser]

Copies a call's page (call.html, written beside its result.json) and its recording, or a batch's night
report (report.html, beside report.json) and the pages of its calls, from S3 into
$CALLPIPE_HOME/pages/<bucket>/… (the bucket's layout, so the report's links work), prints the page's
file:// address and opens it in the default browser. The pages need no server and no network; they can
also be opened straight from S3 or any copy of the output.

Options:
  --out <url>      the output the call or batch was written to (default CALLPIPE_S3_OUTPUT_PREFIX)
  --no-audio       do not copy the recording (the page can still open a local file)
  --no-browser     only copy and print the address`;

/** Copies an object to the mirror unless a copy of the same size is there. */
async function mirror(store: ObjectStore, key: string, root: string): Promise<string> {
  const path = join(root, store.bucket, ...key.split('/'));
  const head = await store.head(key);
  if (!head) throw new CliError(`no such object: s3://${store.bucket}/${key}`, 1);
  if (!existsSync(path) || statSync(path).size !== head.size) {
    mkdirSync(dirname(path), { recursive: true });
    await store.download(key, path);
  }
  return path;
}

function openInBrowser(url: string): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  const child = spawn(cmd, args as string[], {
    detached: true,
    stdio: 'ignore',
    env: childEnv({ groups: ['desktop'] }),
  });
  child.on('error', () =>
    console.error(`callpipe open: could not start a browser (${cmd}); open the address above`),
  );
  child.unref();
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('open', argv, {
    out: { type: 'string' },
    'no-audio': { type: 'boolean', default: false },
    'no-browser': { type: 'boolean', default: false },
  });
  if (positionals.length !== 1)
    throw new CliError('open: expected one call id or batch id (see callpipe open --help)');
  const id = positionals[0]!;
  const { config } = pipelineConfig();
  const output = outputLocation(values.out, config);
  const store = createObjectStore(config.s3).withBucket(output.bucket);
  const root = join(config.stack.home, 'pages');

  let page: string;
  let query = '';
  const callKeys = (() => {
    try {
      return callOutputKeys(output, assertSafeCallId(id));
    } catch (err) {
      if (err instanceof KeyError) return undefined;
      throw err;
    }
  })();
  if (callKeys && (await store.exists(callKeys.page))) {
    page = await mirror(store, callKeys.page, root);
    await mirror(store, callKeys.result, root);
    if (!values['no-audio']) {
      const result = JSON.parse(await store.getText(callKeys.result)) as {
        source: { bucket: string; key: string };
      };
      const source = createObjectStore(config.s3).withBucket(result.source.bucket);
      const audio = await mirror(source, result.source.key, root).catch((err: unknown) => {
        console.error(`callpipe open: the recording is not copied (${(err as Error).message})`);
        return undefined;
      });
      if (audio) query = `?audio=${encodeURIComponent(pathToFileURL(audio).href)}`;
    }
  } else {
    const keys = batchReportKeys(batchReportPrefix(output, id));
    if (!(await store.exists(keys.html))) {
      throw new CliError(
        `open: no call page s3://${output.bucket}/${callKeys?.page ?? `…/${id}/call.html`} and no night report s3://${output.bucket}/${keys.html}`,
        1,
      );
    }
    page = await mirror(store, keys.html, root);
    const report = JSON.parse(await store.getText(keys.json)) as BatchReport;
    const limit = pLimit(8);
    await Promise.all(
      report.rows
        .filter((r) => r.status === 'done' || r.status === 'partial' || r.status === 'skipped')
        .map((r) =>
          limit(() => mirror(store, callOutputKeys(output, r.callId).page, root).catch(() => undefined)),
        ),
    );
  }
  const url = `${pathToFileURL(page).href}${query}`;
  console.log(url);
  if (!values['no-browser']) openInBrowser(url);
  return 0;
}
