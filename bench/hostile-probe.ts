/**
 * The hostile probe (issues 26 and 41) as one script: the inputs a careful operator's mistakes and a
 * hostile user's tries amount to, each run against a local stack of its own (emulator at speed 100)
 * through the real `callpipe` command where a user would use it, and a table printed of case, expected
 * outcome, outcome and message. Exits 1 when any case's outcome is not the expected one.
 *
 *   node scripts/on-node.mjs ts bench/hostile-probe.ts [--only <substring>]
 *
 * Expected outcomes: `refused` (the command exits non-zero with the message shown, nothing done),
 * `bounded` (it goes on, within the bound the message states), `held` (a property that must hold did).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { postEvent } from '../activities/events/http-post.ts';
import { uploadKey } from '../schemas/call-keys.ts';
import { textTable } from '../cli/text-table.ts';
import { startBenchStack, type BenchStack } from './lib/bench-stack.ts';

const BIN = fileURLToPath(new URL('../bin/callpipe.js', import.meta.url));
const MANIFEST_MODULE = new URL('../activities/backfill/manifest.ts', import.meta.url).href;
const GIB = 1024 ** 3;
const log = (line: string) => console.error(`[hostile-probe] ${line}`);

type Expected = 'refused' | 'bounded' | 'held';
interface Outcome {
  outcome: Expected | 'accepted' | 'broken';
  message: string;
}
interface Case {
  name: string;
  expected: Expected;
  run: () => Promise<Outcome>;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real command with the stack's environment (and `env` over it); never throws. */
async function callpipe(bench: BenchStack, args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...bench.stack.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The command's last line on stderr, without the `callpipe: ` it starts with. */
const said = (r: Run) =>
  (r.stderr.trim().split('\n').at(-1) ?? '').replace(/^callpipe: /, '') || r.stdout.trim().split('\n')[0]!;

/** Refused when the command exits non-zero and its message matches (that line shown); else what happened. */
function refusedIf(r: Run, pattern: RegExp): Outcome {
  if (r.code !== 0 && pattern.test(r.stderr)) {
    const line = r.stderr.split('\n').find((l) => pattern.test(l)) ?? said(r);
    return { outcome: 'refused', message: line.trim().replace(/^callpipe: /, '') };
  }
  return { outcome: r.code === 0 ? 'accepted' : 'broken', message: said(r) || `exit ${r.code}` };
}

function cases(bench: BenchStack, dir: string): Case[] {
  const cli = (args: string[], env?: Record<string, string>) => callpipe(bench, args, env);
  const store = bench.pc.store;
  const inputPrefix = bench.pc.config.s3.inputPrefix;
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const secret = file('passwd', `root:x:0:0:root:/root:/bin/bash ${randomBytes(4).toString('hex')}\n`);
  const manifest = (name: string, text: string) => file(`${name}.csv`, text);
  /** A manifest `callpipe backfill` must refuse before it starts anything, saying `reason`. */
  const refusedManifest = (name: string, slug: string, csv: string, reason: RegExp): Case => ({
    name,
    expected: 'refused',
    run: async () =>
      refusedIf(await cli(['backfill', '--manifest', manifest(slug, csv), '--detach']), reason),
  });
  const query = (sql: string) => cli(['query', sql, '--tables', `s3://${store.bucket}/probe-tables/`]);
  const uploadedAs = (name: string, content: Buffer | string) =>
    uploadKey(inputPrefix, 'local', createHash('sha256').update(content).digest('hex'), name);

  return [
    // --- rule files and user files (issue 26) ---
    {
      name: 'rule file is a FIFO',
      expected: 'refused',
      run: async () => {
        const fifo = join(dir, 'rules.fifo');
        execFileSync('mkfifo', [fifo]);
        return refusedIf(
          await cli(['process', secret, '--rules', fifo, '--detach']),
          /FIFO|not a regular file/,
        );
      },
    },
    {
      name: 'rule file of 60 MB',
      expected: 'refused',
      run: async () => {
        const big = file('big-rules.yaml', 'format: 1\n');
        truncateSync(big, 60 * 1024 * 1024);
        return refusedIf(await cli(['process', secret, '--rules', big, '--detach']), /larger than|MiB/);
      },
    },
    {
      name: 'rule file without format',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli([
            'process',
            secret,
            '--rules',
            file('no-format.yaml', 'name: x\nversion: "1"\n'),
            '--detach',
          ]),
          /format: missing: a rule file starts with "format: 1"/,
        ),
    },
    {
      name: 'redaction pattern with lookahead',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', secret, '--detach'], {
            CALLPIPE_REDACTION_RULES: file(
              'lookahead.json',
              '{\n  "patterns": [\n    { "kind": "member", "regex": "\\\\d+(?=円)" }\n  ]\n}\n',
            ),
          }),
          /uses lookahead or lookbehind/,
        ),
    },
    {
      name: 'redaction pattern with a backreference',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', secret, '--detach'], {
            CALLPIPE_REDACTION_RULES: file(
              'backref.json',
              '{\n  "patterns": [\n    { "kind": "member", "regex": "(a)\\\\1" }\n  ]\n}\n',
            ),
          }),
          /backreference/,
        ),
    },
    {
      name: 'dictionary file of 3 MiB',
      expected: 'refused',
      run: async () => {
        const big = file('big.tsv', 'a\tあ\n');
        truncateSync(big, 3 * 1024 * 1024);
        return refusedIf(await cli(['process', secret, '--dictionary', big, '--detach']), /MiB/);
      },
    },
    {
      name: 'config file of 9 MiB',
      expected: 'refused',
      run: async () => {
        const big = file('big-config.json', '{}');
        truncateSync(big, 9 * 1024 * 1024);
        return refusedIf(await cli(['status'], { CALLPIPE_CONFIG: big }), /more than the 8388608/);
      },
    },
    // --- manifests ---
    refusedManifest(
      'manifest repeats a column (uri,uri)',
      'uri-uri',
      'uri,uri\ns3://b/a.wav,s3://b/b.wav\n',
      /column 'uri' is given twice/,
    ),
    refusedManifest(
      'manifest gives one call id to two recordings',
      'one-id',
      'key,call_id\nin/a.wav,c-1\nin/b.wav,c-1\n',
      /line 3: call id of line 2, for another recording/,
    ),
    refusedManifest(
      'manifest gives one recording two call ids',
      'two-ids',
      'key,call_id\nin/a.wav,c-1\nin/a.wav,c-2\n',
      /line 3: the recording of line 2, under another call id/,
    ),
    refusedManifest(
      'manifest call id ../escape',
      'escape',
      'key,call_id\nin/a.wav,../escape\n',
      /line 2 \(call_id\)/,
    ),
    refusedManifest(
      'manifest call id with a phone number',
      'phone',
      'key,call_id\nin/a.wav,09012345678\n',
      /line 2/,
    ),
    refusedManifest('manifest that is empty', 'empty', '', /manifest is empty/),
    refusedManifest('manifest with a header only', 'header', 'key,agent\n', /a header and no rows/),
    refusedManifest(
      'manifest with an unclosed quote',
      'quote',
      'key,agent\n"in/a.wav,x\n',
      /line 2: a quote opened here is never closed/,
    ),
    refusedManifest(
      'manifest row with another number of cells',
      'cells',
      'key,agent\nin/a.wav,x,y\n',
      /line 2: not the 2 cells of the header/,
    ),
    refusedManifest(
      'manifest with a bad direction cell',
      'direction',
      'key,direction\nin/a.wav,sideways\n',
      /line 2 \(direction\)/,
    ),
    {
      name: 'manifest of 500,001 rows (CLI check)',
      expected: 'refused',
      run: async () => {
        const path = join(dir, 'rows.csv');
        const lines = ['key,agent'];
        for (let i = 0; i < 500_001; i++)
          lines.push(`in/2026/11/01/call-${i.toString(36)}.wav,agent-${i % 50}`);
        writeFileSync(path, `${lines.join('\n')}\n`);
        return refusedIf(await cli(['backfill', '--manifest', path, '--detach']), /more than 500,000 rows/);
      },
    },
    {
      name: 'manifest of 500,001 rows checked in a 160-MiB heap',
      expected: 'bounded',
      run: async () => {
        const script = `import { createReadStream } from 'node:fs';
          import { readManifest } from ${JSON.stringify(MANIFEST_MODULE)};
          const m = await readManifest(createReadStream(${JSON.stringify(join(dir, 'rows.csv'))}), 'b').then(() => 'accepted', (e) => e.message);
          console.log(JSON.stringify({ m, rss: process.resourceUsage().maxRSS }));`;
        const out = await new Promise<string>((resolve) => {
          const child = spawn(process.execPath, [
            '--max-old-space-size=160',
            '--input-type=module',
            '-e',
            script,
          ]);
          let text = '';
          child.stdout.on('data', (c: Buffer) => (text += c.toString()));
          child.on('close', (code) => resolve(code === 0 ? text : `exit ${code}`));
        });
        if (!out.startsWith('{'))
          return { outcome: 'broken', message: `the check ran out of its heap (${out})` };
        const { m, rss } = JSON.parse(out) as { m: string; rss: number };
        return {
          outcome: /more than 500,000 rows/.test(m) ? 'bounded' : 'broken',
          message: `peak RSS ${Math.round(rss / 1024)} MiB: ${m}`,
        };
      },
    },
    // --- process ---
    {
      name: 'process a symbolic link to /etc/passwd-like file',
      expected: 'refused',
      run: async () => {
        const link = join(dir, 'x.wav');
        symlinkSync(secret, link);
        const r = await cli(['process', link, '--detach']);
        const uploaded = await store.exists(uploadedAs('x.wav', readFileSync(secret)));
        return uploaded
          ? { outcome: 'broken', message: 'the target was uploaded' }
          : refusedIf(r, /a symbolic link \(to /);
      },
    },
    {
      name: 'process a text file named .wav',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', file('notes.wav', readFileSync(secret)), '--detach']),
          /not a recording: text/,
        ),
    },
    {
      name: 'process an empty file',
      expected: 'refused',
      run: async () =>
        refusedIf(await cli(['process', file('empty.wav', ''), '--detach']), /empty \(0 bytes\)/),
    },
    {
      name: 'process a missing file',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', join(dir, 'missing.wav'), '--detach']),
          /no such file.*|nothing was started/,
        ),
    },
    {
      name: 'process an HLS playlist named .wav',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', file('list.wav', '#EXTM3U\n#EXTINF:10,\n/etc/passwd\n'), '--detach']),
          /not a recording: /,
        ),
    },
    {
      name: 'process s3://bucket with no key',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['process', `s3://${store.bucket}`, '--detach']),
          /names a bucket, not an object/,
        ),
    },
    {
      name: 'process with a wrong S3 secret',
      expected: 'refused',
      run: async () => {
        await store.put('probe/x.wav', 'RIFF');
        const wrong = `wrong-${randomBytes(6).toString('hex')}`;
        const r = await cli(['process', `s3://${store.bucket}/probe/x.wav`, '--detach'], {
          CALLPIPE_S3_SECRET_ACCESS_KEY: wrong,
        });
        if (r.stderr.includes(wrong)) return { outcome: 'broken', message: 'printed the secret' };
        return refusedIf(r, /refused the request's signature/);
      },
    },
    {
      name: 'process an object that does not exist',
      expected: 'refused',
      run: async () =>
        refusedIf(await cli(['process', `s3://${store.bucket}/nowhere/x.wav`, '--detach']), /no such object/),
    },
    {
      name: 'process a WAV header over garbage',
      expected: 'held',
      run: async () => {
        const fake = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt '), randomBytes(2048)]);
        const path = file('fake.wav', fake);
        const r = await cli(['process', path, '--json']);
        const gone = !(await store.exists(uploadedAs(basename(path), fake)));
        const outcome = (
          JSON.parse(r.stdout.slice(r.stdout.indexOf('[')) || '[]') as {
            status: string;
            stage?: string;
            reason?: string;
          }[]
        )[0];
        return {
          outcome: outcome?.status === 'failed' && gone ? 'held' : 'broken',
          message: `call ${outcome?.status} at ${outcome?.stage}: ${outcome?.reason?.slice(0, 80)}; upload ${gone ? 'removed' : 'left in the bucket'}`,
        };
      },
    },
    // --- query ---
    ...(
      [
        ['query read_text of a file', `SELECT * FROM read_text('${secret}')`, /only the analysis tables/],
        [
          'query read_csv of /etc/passwd',
          `SELECT * FROM read_csv('/etc/passwd')`,
          /only the analysis tables/,
        ],
        ['query COPY TO a file', `COPY (SELECT 1) TO '${join(dir, 'x.csv')}'`, /only|one SQL/],
        ['query ATTACH a database', `ATTACH '${join(dir, 'evil.db')}'`, /only/],
        ['query INSTALL httpfs', 'INSTALL httpfs', /only a SELECT.*not INSTALL/],
        ['query LOAD httpfs', 'LOAD httpfs', /only a SELECT.*not LOAD/],
        ['query SET enable_external_access', 'SET enable_external_access = true', /only a SELECT.*not SET/],
        ['query unknown column', 'SELECT nope FROM calls', /no column "nope"; the columns are/],
        ['query unknown table', 'SELECT * FROM callz', /no table "callz": the tables are/],
      ] as const
    ).map(([name, sql, pattern]): Case => ({
      name,
      expected: 'refused',
      run: async () => {
        const r = await query(sql);
        const wrote = existsSync(join(dir, 'x.csv')) || existsSync(join(dir, 'evil.db'));
        if (r.stdout.includes('root:x:0:0')) return { outcome: 'broken', message: 'printed the file' };
        if (wrote) return { outcome: 'broken', message: 'wrote a file' };
        return refusedIf(r, pattern);
      },
    })),
    {
      name: 'query --csv of a cell a spreadsheet would run',
      expected: 'held',
      run: async () => {
        const r = await cli([
          'query',
          'SELECT agent FROM calls',
          '--csv',
          '--tables',
          `s3://${store.bucket}/probe-tables/`,
        ]);
        const cell = r.stdout.split('\n')[1] ?? '';
        return {
          // A CSV cell, quoted when it holds quotes: what a spreadsheet reads starts with '.
          outcome: r.code === 0 && /^"?'=/.test(cell) ? 'held' : 'broken',
          message: `the cell written as ${cell.slice(0, 40)}`,
        };
      },
    },
    // --- export and forget ---
    {
      name: 'export to a folder that holds files',
      expected: 'refused',
      run: async () => {
        const used = join(dir, 'used');
        mkdirSync(used);
        writeFileSync(join(used, 'mine.txt'), 'x');
        return refusedIf(await cli(['export', 'some-call', '--to', used]), /not empty|no call/);
      },
    },
    {
      name: 'export to a symbolic link to a folder',
      expected: 'refused',
      run: async () => {
        mkdirSync(join(dir, 'real'));
        symlinkSync(join(dir, 'real'), join(dir, 'link'));
        return refusedIf(
          await cli(['export', 'some-call', '--to', join(dir, 'link')]),
          /is a symbolic link \(to /,
        );
      },
    },
    {
      name: 'export call id ../..',
      expected: 'refused',
      // Built from its parts: the call id climbs out of its folder, which no path in this file may.
      run: async () =>
        refusedIf(await cli(['export', ['..', '..'].join('/'), '--to', join(dir, 'new')]), /call id/),
    },
    {
      name: 'forget call id ../x',
      expected: 'refused',
      run: async () => refusedIf(await cli(['forget', '../x', '--yes']), /call id/),
    },
    {
      name: 'forget 200 unknown ids (dry run)',
      expected: 'held',
      run: async () => {
        const ids = Array.from({ length: 200 }, (_, i) => `probe-${i.toString(36)}`);
        const r = await cli(['forget', ...ids, '--dry-run']);
        const progress = r.stderr.split('\n').filter((l) => /looked up \d+ of 200 calls/.test(l)).length;
        const rows = r.stdout.split('\n').filter((l) => l.startsWith('probe-')).length;
        return {
          outcome: r.code === 0 && progress === 10 && rows === 200 ? 'held' : 'broken',
          message: `${progress} progress lines, ${rows} calls listed as looked up`,
        };
      },
    },
    // --- events ---
    {
      name: 'webhook URL file:///etc/passwd',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['status'], { CALLPIPE_EVENTS_WEBHOOK_URL: 'file:///etc/passwd' }),
          /http:\/\/ or https:\/\//,
        ),
    },
    {
      name: 'webhook URL with a password',
      expected: 'refused',
      run: async () =>
        refusedIf(
          await cli(['status'], { CALLPIPE_EVENTS_WEBHOOK_URL: 'https://u:p@example.com/hook' }),
          /user name or password/,
        ),
    },
    {
      name: 'webhook answers 200 with 1 GiB',
      expected: 'bounded',
      run: async () => {
        let sent = 0;
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const server = createServer((req, res: ServerResponse) => {
          req.resume();
          req.on('end', () => {
            res.writeHead(200);
            const more = () => {
              while (sent < GIB && !res.destroyed) {
                sent += chunk.length;
                if (!res.write(chunk)) return void res.once('drain', more);
              }
              if (sent >= GIB) res.end();
            };
            more();
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const before = process.memoryUsage().rss;
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        const message = await postEvent({ url, body: '{}', headers: {}, timeoutMs: 300_000 }).then(
          () => 'counted delivered',
          (e: Error) => e.message,
        );
        const rise = Math.round((process.memoryUsage().rss - before) / 1024 ** 2);
        server.closeAllConnections();
        server.close();
        return {
          outcome: /more than 16 KiB/.test(message) ? 'bounded' : 'broken',
          message: `${message.slice(0, 70)}…; ${Math.round(sent / 1024 ** 2)} MiB sent, RSS +${rise} MiB`,
        };
      },
    },
    {
      name: 'webhook redirects to another port',
      expected: 'refused',
      run: async () => {
        const server = createServer((req, res) => {
          req.resume();
          res.writeHead(307, { location: 'http://127.0.0.1:9/hook' }).end();
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        const message = await postEvent({ url, body: '{}', headers: {}, timeoutMs: 10_000 }).then(
          () => 'followed',
          (e: Error) => e.message,
        );
        server.close();
        return {
          outcome: /another port \(9 on the same host\)/.test(message) ? 'refused' : 'broken',
          message,
        };
      },
    },
    // --- the stack's own secrets ---
    {
      name: 'codec server without its token',
      expected: 'refused',
      run: async () => {
        const url = bench.stack.addresses.codecServerUrl;
        if (!url) return { outcome: 'broken', message: 'no codec server' };
        const res = await fetch(`${url}/decode`, { method: 'POST', body: '{"payloads":[]}' });
        return { outcome: res.status === 401 ? 'refused' : 'broken', message: `HTTP ${res.status}` };
      },
    },
    {
      name: "codec server's environment",
      expected: 'held',
      run: async () => {
        const pid = bench.stack.processes.codecServer?.pid;
        if (!pid) return { outcome: 'broken', message: 'no codec server' };
        const names = readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .map((v) => v.split('=')[0] ?? '');
        const held = names.filter((n) => /SECRET|ACCESS_KEY|DIGEST_KEY|SESSION_TOKEN/.test(n));
        return {
          outcome: held.length === 0 ? 'held' : 'broken',
          message: held.length
            ? `holds ${held.join(', ')}`
            : `${names.filter((n) => n.startsWith('CALLPIPE_')).join(', ')} only`,
        };
      },
    },
    {
      name: 'secret files under CALLPIPE_HOME are 0600',
      expected: 'held',
      run: async () => {
        const token = join(bench.home, 'codec-server-token');
        const mode = (statSync(token).mode & 0o777).toString(8);
        return { outcome: mode === '600' ? 'held' : 'broken', message: `codec-server-token ${mode}` };
      },
    },
  ];
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-probe-'));
  const bench = await startBenchStack({ label: 'hostile-probe', speed: 100, budget: 4, log });
  const rows: string[][] = [];
  let wrong = 0;
  try {
    // One day of `calls` for the query cases, written by DuckDB itself.
    const parquet = join(dir, 'calls.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    // Its agent is a formula a spreadsheet would run: CSV output must neutralise it.
    await c.run(
      `COPY (SELECT 'call-a' AS call_id, '=HYPERLINK("http://x")' AS agent) TO '${parquet}' (FORMAT parquet)`,
    );
    c.closeSync();
    db.closeSync();
    await bench.pc.store.put('probe-tables/calls/dt=2026-11-01/part-a.parquet', readFileSync(parquet));

    for (const c of cases(bench, dir)) {
      if (values.only && !c.name.includes(values.only)) continue;
      log(c.name);
      const got = await c.run().catch((err: unknown): Outcome => ({
        outcome: 'broken',
        message: `the probe failed: ${(err as Error).message}`,
      }));
      if (got.outcome !== c.expected) wrong += 1;
      rows.push([
        c.name,
        c.expected,
        got.outcome === c.expected ? got.outcome : `${got.outcome} (!)`,
        got.message,
      ]);
    }
  } finally {
    await bench.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(textTable([['case', 'expected', 'outcome', 'message'], ...rows]));
  console.log(`${rows.length} cases: ${rows.length - wrong} as expected, ${wrong} not`);
  return wrong === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
