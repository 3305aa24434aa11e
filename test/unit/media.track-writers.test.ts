/**
 * The plan's track files written from conditioned samples (activities/media/track-writers.ts): each
 * track's channels mixed at equal gain, rounded and clipped to 16 bits, mu-law encoded, appended block
 * after block.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTrackWriters } from '../../activities/media/track-writers.ts';
import { encodeMulaw } from '../../schemas/g711.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

describe('openTrackWriters', () => {
  it('writes each track’s channels mixed, rounded, clipped and encoded, block after block', async () => {
    const left = [100.4, -2000.6, 40000, -50000, 0];
    const right = [99.6, 2000.6, 40000, 10000, -1];
    const paths = [join(tmp.dir, 'mix.mulaw'), join(tmp.dir, 'right.mulaw')];
    const writers = await openTrackWriters([
      { sourceChannels: [0, 1], path: paths[0]! },
      { sourceChannels: [1], path: paths[1]! },
    ]);
    // Two blocks, the second shorter than the buffers the first sized: only its frames are written.
    await writers.write([Float64Array.from(left.slice(0, 3)), Float64Array.from(right.slice(0, 3))], 3);
    await writers.write(
      [Float64Array.from([...left.slice(3), 7, 7]), Float64Array.from([...right.slice(3), 7, 7])],
      2,
    );
    await writers.end();
    const mixed = [100, 0, 32767, -20000, 0];
    const rightAlone = [100, 2001, 32767, 10000, -1];
    expect([...(await readFile(paths[0]!))]).toEqual(mixed.map(encodeMulaw));
    expect([...(await readFile(paths[1]!))]).toEqual(rightAlone.map(encodeMulaw));
  });

  it('writes blocks beyond its buffer whole and in order, and nothing buffered when closed after a failure', async () => {
    const path = join(tmp.dir, 'long.mulaw');
    const writers = await openTrackWriters([{ sourceChannels: [0], path }]);
    // Blocks of 300,001 samples: the 1-MiB buffer fills part-way through the fourth, and a block larger than it is written too.
    const blocks = [300_001, 300_001, 300_001, 300_001, 1_500_000].map((n, b) =>
      Float64Array.from({ length: n }, (_, i) => ((i * 7 + b * 13) % 20_001) - 10_000),
    );
    for (const block of blocks) await writers.write([block], block.length);
    await writers.end();
    const expected = Buffer.from(blocks.flatMap((block) => Array.from(block, (v) => encodeMulaw(v))));
    expect((await readFile(path)).equals(expected)).toBe(true);

    const failedPath = join(tmp.dir, 'failed.mulaw');
    const failed = await openTrackWriters([{ sourceChannels: [0], path: failedPath }]);
    await failed.write([Float64Array.from([1, 2, 3])], 3);
    await failed.close();
    expect((await readFile(failedPath)).length).toBe(0);
  });
});
