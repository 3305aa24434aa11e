/**
 * A synthetic night of calls: lengths, channels, containers and sample rates drawn from a seed, rendered
 * once (DTMF scripts, activities/media/fixture.ts) into a git-ignored cache, so generating the audio is
 * never part of a measured run and a second run starts at once.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { renderFixture, type FixtureContainer } from '../../activities/media/fixture.ts';
import { PROJECT_ROOT } from '../../cli/tools/provision.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';

export const BENCH_CACHE = join(PROJECT_ROOT, '.bench-cache');

export interface CallSpec {
  name: string;
  durationSeconds: number;
  stereo: boolean;
  container: FixtureContainer;
  sampleRate: number;
  seed: number;
  /** Share of the customer's lines garbled (call-script.ts `garbled`); absent on a clean night. */
  garbled?: number;
}

export interface NightShape {
  calls: number;
  minSeconds: number;
  maxSeconds: number;
  seed: number;
  /** Every call stereo (agent and customer each on a channel, as most contact centers record). */
  allStereo?: boolean;
  /** Share of the customer's lines garbled: a night of poorly recognized calls (`--garbled`). */
  garbled?: number;
}

const CONTAINERS: FixtureContainer[] = ['wav', 'm4a', 'mp3'];
const RATES = [8000, 16000, 22050, 44100, 48000];

/**
 * Lengths are log-uniform between the bounds (many short calls, a few long ones, as a contact center's
 * night looks) and the first call is always the longest allowed, so every night has its long pole.
 */
export function nightSpecs(shape: NightShape): CallSpec[] {
  const random = seededRandom(shape.seed);
  const { minSeconds, maxSeconds } = shape;
  return Array.from({ length: shape.calls }, (_, i) => {
    const u = random();
    const durationSeconds = i === 0 ? maxSeconds : Math.round(minSeconds * (maxSeconds / minSeconds) ** u);
    // The draw is made either way, so an all-stereo night has the same lengths, containers and rates.
    const stereo = i === 0 || random() < 0.5 || shape.allStereo === true;
    const container = CONTAINERS[i % CONTAINERS.length]!;
    const sampleRate = RATES[Math.floor(random() * RATES.length)]!;
    const seed = shape.seed * 1000 + i;
    const garbled = shape.garbled ?? 0;
    // A garbled night's calls are other recordings: their own names in the cache.
    const name = `call-${String(i).padStart(2, '0')}-${durationSeconds}s-${stereo ? 'stereo' : 'mono'}-${sampleRate}${garbled > 0 ? `-garbled${garbled}` : ''}.${container}`;
    return { name, durationSeconds, stereo, container, sampleRate, seed, garbled };
  });
}

export function scriptOf(spec: CallSpec): FixtureScript {
  return generateCallScript({
    durationSeconds: spec.durationSeconds,
    stereo: spec.stereo,
    seed: spec.seed,
    garbled: spec.garbled ?? 0,
  });
}

/** Renders what the cache lacks; returns the path of every call. */
export async function renderCalls(
  specs: CallSpec[],
  dir: string,
  log: (line: string) => void,
): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const paths: string[] = [];
  for (const spec of specs) {
    const path = join(dir, spec.name);
    if (!existsSync(path)) {
      const t0 = Date.now();
      // Written under a temporary name: an interrupted render never leaves a truncated call cached.
      const partial = join(dir, `.partial-${spec.name}`);
      await renderFixture(scriptOf(spec), partial, {
        sampleRate: spec.sampleRate,
        container: spec.container,
        seed: spec.seed,
      });
      renameSync(partial, path);
      log(`rendered ${spec.name} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    paths.push(path);
  }
  return paths;
}
