/**
 * `CALLPIPE_SERVICE_SPEED=auto` (issue 18, item 5): does the pace settle within 10 % of the fastest pacing
 * the service accepts, at no more than one restart per session-hour?
 *
 *   npm run bench:pace -- [--ceiling 8] [--streams 8] [--sessions 24] [--session-seconds 600]
 *
 * The emulator runs at speed 1 (real deadlines) with a ceiling: its recognizer works through audio at
 * `ceiling` × real time and answers 412 to a session more than its 2-s buffer ahead. The worker's
 * recognition activity (`recognizeSession`, without Temporal) runs `sessions` sessions of a synthetic
 * mono call, `streams` at a time, against it with a client at `speed: auto`; a 412 ends a session, which
 * restarts after its last final result as it does in a worker. Printed: the pace's steps over time, where
 * it settled against the ceiling, restarts per session-hour, audio sent twice, and the wall time against
 * the ideal at the ceiling (what a client told the ceiling beforehand would take).
 */
import { parseArgs } from 'node:util';
import { cpus, loadavg } from 'node:os';
import pLimit from 'p-limit';
import { createObjectStore } from '../activities/storage/object-store.ts';
import { createAsrActivities, sessionResultSchema } from '../activities/asr/asr-activities.ts';
import { generateCallScript } from '../activities/media/call-script.ts';
import { renderPcm } from '../activities/media/fixture.ts';
import { createServiceClient } from '../service/client.ts';
import type { PaceEvent } from '../service/pace.ts';
import type { EmulatorStats } from '../emulator/server.ts';
import { toMulaw } from '../test/helpers/dtmf-audio.ts';
import { emulatorServiceConfig, startStreamStack } from './lib/stream-stack.ts';

const MODEL = 'ja-gen_tf-08';

/** A synthetic mono call of `seconds`, as the staged 8-kHz mu-law audio of a session. */
function callAudio(seconds: number): Buffer {
  const script = generateCallScript({ durationSeconds: seconds, stereo: false, seed: 7 });
  const blocks: Buffer[] = [];
  for (const block of renderPcm({ ...script, durationSeconds: seconds }, { sampleRate: 8000, channels: 1 })) {
    const pcm = new Int16Array(block.buffer, block.byteOffset, block.byteLength / 2);
    blocks.push(toMulaw(Float32Array.from(pcm, (v) => v / 32768)));
  }
  return Buffer.concat(blocks);
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ceiling: { type: 'string', default: '8' },
      streams: { type: 'string', default: '8' },
      sessions: { type: 'string', default: '24' },
      'session-seconds': { type: 'string', default: '600' },
      max: { type: 'string', default: '32' },
    },
  });
  const ceiling = Number(values.ceiling);
  const streams = Number(values.streams);
  const sessions = Number(values.sessions);
  const sessionSeconds = Number(values['session-seconds']);
  const stack = await startStreamStack('auto-pace', [
    '--speed',
    '1',
    '--ceiling',
    String(ceiling),
    '--concurrent-sessions',
    String(4 * streams),
    '--rate-limit',
    '0',
  ]);
  try {
    const store = createObjectStore(stack.s3);
    const audioKey = 'bench/auto-pace/audio.mulaw';
    await store.put(audioKey, callAudio(sessionSeconds));
    const t0 = performance.now();
    const at = () => (performance.now() - t0) / 1000;
    const events: (PaceEvent & { at: number })[] = [];
    const service = createServiceClient(
      { ...emulatorServiceConfig(stack.emulatorUrl, MODEL, 'auto'), speedMax: Number(values.max) },
      {
        concurrency: { asrSessions: streams },
        onPaceEvent: (e) => events.push({ ...e, at: at() }),
      },
    );
    const asr = createAsrActivities({ service, store, slowestPace: 1, model: MODEL, restartDelayMs: 200 });
    console.log(
      `auto pace: emulator speed 1, ceiling ${ceiling}×; ${sessions} sessions of ${sessionSeconds} s, ` +
        `${streams} at a time; ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} before the run`,
    );
    const limit = pLimit(streams);
    const runId = Date.now();
    const outputs = await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        limit(() =>
          asr.recognizeSession({
            callId: `auto-pace-${i}`,
            session: i,
            audioKey,
            start: 0,
            end: sessionSeconds,
            resultKey: `bench/auto-pace/${runId}/${i}.json`,
            maxRestarts: 20,
          }),
        ),
      ),
    );
    const wall = at();
    const stats = (await (await fetch(`${stack.emulatorUrl}/emulator/stats`)).json()) as EmulatorStats;

    for (const e of events) {
      const detail =
        e.type === 'raised'
          ? `probe ${e.probe.toFixed(2)}× held: pace ${e.rate.toFixed(2)}×`
          : e.type === 'refused'
            ? `412 at ${e.refused.toFixed(2)}×: pace ${e.rate.toFixed(2)}×${e.settled ? ', settled' : ''}`
            : `settled at ${e.rate.toFixed(2)}×`;
      console.log(`  ${e.at.toFixed(1).padStart(7)} s  ${detail}`);
    }
    const restarts = outputs.reduce((n, o) => n + o.restarts, 0);
    // Why sessions restarted: 412s are the pace's cost, anything else the machine's or the service's.
    const reasons = new Map<string, number>();
    for (const o of outputs) {
      const result = sessionResultSchema.parse(JSON.parse(await store.getText(o.resultKey)));
      for (const r of result.restartReasons) reasons.set(r, (reasons.get(r) ?? 0) + 1);
    }
    const reStreamed = outputs.reduce((n, o) => n + o.reStreamedSeconds, 0);
    const sessionHours = (sessions * sessionSeconds) / 3600;
    const pace = events.at(-1)?.rate ?? 1;
    const settledAt = events.find((e) => e.type === 'settled')?.at;
    const refusedAfter =
      settledAt === undefined ? 0 : events.filter((e) => e.type === 'refused' && e.at > settledAt).length;
    const ideal = (sessions * sessionSeconds) / streams / ceiling;
    console.log(
      [
        `settled pace ${pace.toFixed(2)}× = ${(pace / ceiling).toFixed(3)} of the ceiling` +
          (settledAt !== undefined
            ? `, after ${settledAt.toFixed(0)} s; ${refusedAfter} refusals after that`
            : ', not settled'),
        `restarts ${restarts} (${(restarts / sessionHours).toFixed(2)} per session-hour, ${sessionHours.toFixed(1)} session-hours); ` +
          `412 answers ${stats.byStatus['412'] ?? 0}; audio sent twice ${reStreamed.toFixed(1)} s ` +
          `(${((100 * reStreamed) / (sessions * sessionSeconds)).toFixed(2)} %)`,
        ...[...reasons].map(([reason, n]) => `  restarted ${n}×: ${reason}`),
        `wall ${wall.toFixed(1)} s; ideal at the ceiling ${ideal.toFixed(1)} s: ratio ${(wall / ideal).toFixed(3)}; ` +
          `at real time it would be ${(ideal * ceiling).toFixed(0)} s`,
      ].join('\n'),
    );
  } finally {
    await stack.close();
  }
}

run().catch((err: unknown) => {
  console.error((err as Error).stack ?? String(err));
  process.exit(1);
});
