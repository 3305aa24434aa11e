/**
 * Many recordings made cheaply: a few distinct rendered calls uploaded under many keys, each copy made
 * unique in its silent tail (each key is its own call), so making them costs seconds, not the benchmark.
 * Recording `i` has the same content under every prefix it is uploaded to, so two runs over two prefixes
 * can be compared call by call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';

export interface UniqueRecordings {
  /** Distinct calls rendered (default 10). */
  distinct?: number;
  /** Length of each call, seconds. */
  seconds: number;
  /** Where the distinct calls are rendered. */
  dir: string;
}

/** Renders the distinct calls; returns a function that gives recording `i`'s bytes. */
export async function uniqueRecordings(options: UniqueRecordings): Promise<(i: number) => Buffer> {
  const distinct = options.distinct ?? 10;
  const bodies: Buffer[] = [];
  for (let i = 0; i < distinct; i++) {
    const path = join(options.dir, `call-${i}.wav`);
    await renderFixture(
      generateCallScript({ durationSeconds: options.seconds, stereo: true, seed: i + 1 }),
      path,
      { sampleRate: 8000 },
    );
    bodies.push(readFileSync(path));
  }
  return (i) => {
    // The last samples (the silent tail) carry the recording's number, far below the silence threshold.
    // Identical copies would share staged audio (keys follow the content's etag), which is not what a
    // night's recordings look like.
    const body = Buffer.from(bodies[i % distinct]!);
    body.writeUInt16LE(i % 256, body.length - 4);
    body.writeUInt16LE(Math.floor(i / 256) % 256, body.length - 2);
    return body;
  };
}

/** The key of recording `i` under `prefix`. */
export const recordingKey = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}.wav`;

/** Uploads recordings 0…count-1 under `prefix`. */
export async function uploadRecordings(
  store: ObjectStore,
  body: (i: number) => Buffer,
  count: number,
  prefix: string,
): Promise<void> {
  const limit = pLimit(32);
  await Promise.all(
    Array.from({ length: count }, (_, i) => limit(() => store.put(recordingKey(prefix, i), body(i)))),
  );
}
