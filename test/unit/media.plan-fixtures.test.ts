/**
 * The plans of four synthetic calls (stereo 8-kHz and 48-kHz WAV, 44.1-kHz M4A, mono MP3; digital silence
 * between phrases) by the file, balanced and latency strategies, against the plans recorded in
 * test/fixtures/plans/fixture-plans.json (recorded with the plan of 278b673, before the tracks were written from the analysis):
 * a change to the decode, the conditioning or the analysis that moves a cut, a piece or a channel's facts
 * shows here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCallScript, type CallScriptOptions } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import type { PlanOptions } from '../../schemas/plan.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

const recorded = JSON.parse(
  readFileSync(new URL('../fixtures/plans/fixture-plans.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const CALLS: [string, CallScriptOptions, number][] = [
  ['stereo-8k.wav', { durationSeconds: 300, seed: 42 }, 8000],
  ['stereo-48k.wav', { durationSeconds: 300, seed: 7 }, 48000],
  ['stereo-44k.m4a', { durationSeconds: 240, seed: 11 }, 44100],
  ['mono-16k.mp3', { durationSeconds: 240, seed: 5, stereo: false }, 16000],
];
const STRATEGIES: [string, PlanOptions][] = [
  ['file', { recognition: 'file' }],
  ['balanced', { strategy: 'balanced', budget: 16 }],
  ['latency', { strategy: 'latency', room: { free: 16, limit: 16, waiting: 0, source: 'worker' } }],
];

describe('plans of the fixture calls', () => {
  it.each(CALLS)(
    '%s: the same channel facts and sessions as recorded, by every strategy',
    async (name, script, rate) => {
      const path = join(tmp.dir, name);
      await renderFixture(generateCallScript(script), path, { sampleRate: rate });
      const probe = await probeRecording(path);
      for (const [strategy, options] of STRATEGIES) {
        const plan = await planRecording(probe, options);
        const sessions = plan.sessions.map((s) => [
          s.track,
          s.start,
          s.end,
          s.cut,
          s.recognition ?? 'stream',
        ]);
        expect({ channels: plan.channels, sessions }, `${name} ${strategy}`).toEqual(
          recorded[`${name} ${strategy}`],
        );
      }
    },
  );
});
