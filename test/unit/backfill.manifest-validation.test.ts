/**
 * A manifest is validated whole before anything starts: every problem named by its line, and the files
 * that would lose data (a repeated column, one call id claimed by two recordings), that list nothing, or
 * that are too large, refused.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { ManifestError, parseManifest } from '../../activities/backfill/manifest.ts';
import { prepareManifest } from '../../activities/backfill/prepare-manifest.ts';
import { MANIFEST_LIMITS, type ManifestEntry } from '../../schemas/manifest.ts';
import { MemoryStore } from './nlp.helpers.ts';

/** The fake store, streaming its objects in small chunks as S3 does; counts the streams opened. */
class StreamingStore extends MemoryStore {
  streams = 0;
  // The base fake takes no key (it streams nothing): a rest parameter keeps the override compatible.
  override async getStream(...args: unknown[]): Promise<Readable> {
    this.streams += 1;
    const text = await this.getText(String(args[0]));
    return Readable.from(text.match(/[^]{1,7}/g) ?? []);
  }
  override withBucket(): StreamingStore {
    return this;
  }
}

async function prepared(store: StreamingStore, csv: string, pageSize = 2) {
  await store.put('in/m.csv', csv);
  return prepareManifest(store, {
    source: { kind: 'manifest', bucket: 'b', key: 'in/m.csv' },
    pagesPrefix: 'parts/manifest/',
    outputBucket: 'b',
    pageSize,
  });
}

/** The error a manifest is refused with (the test fails if it is accepted). */
async function refusal(
  csv: string,
  limits?: { maxBytes?: number; maxRows?: number },
): Promise<ManifestError> {
  try {
    await parseManifest(csv, 'b', limits ? { limits } : undefined);
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return err as ManifestError;
  }
  throw new Error('the manifest was accepted');
}

describe('manifest validation: rows and bounds', () => {
  it('refuses a header that repeats a column, naming line 1 and the column', async () => {
    const err = await refusal('uri,uri\ns3://calls/a.wav,s3://calls/b.wav\n');
    expect(err.message).toMatch(/line 1: column 'uri' is given twice \(columns 1 and 2\)/);
    // The same column under two spellings is repeated too.
    expect((await refusal('Call ID,call_id,key\nx,y,a.wav\n')).message).toMatch(
      /line 1: column 'call_id' is given twice/,
    );
  });

  it('refuses two recordings that claim one call id, with both lines', async () => {
    const err = await refusal(
      'uri,call_id\ns3://calls/a.wav,c-1\ns3://calls/b.wav,c-2\ns3://calls/c.wav,c-1\n',
    );
    expect(err.message).toMatch(/line 4: call id of line 2, for another recording/);
    expect(err.problems).toHaveLength(1);
  });

  it('takes the same recording listed twice with its call id once, the repeat marked', async () => {
    const entries = await parseManifest(
      'uri,call_id,agent\ns3://calls/a.wav,c-1,ann\ns3://calls/b.wav,,bo\ns3://calls/a.wav,c-1,ann\ns3://calls/b.wav,,bo\n',
      'b',
    );
    expect(entries.map((e) => [e.line, e.duplicateOf])).toEqual([
      [2, undefined],
      [3, undefined],
      [4, 2],
      [5, 3],
    ]);
  });

  it('refuses a repeat of a recording and call id whose other cells differ (a row would be lost)', async () => {
    const err = await refusal('uri,call_id,agent\ns3://calls/a.wav,c-1,ann\ns3://calls/a.wav,c-1,bo\n');
    expect(err.message).toMatch(/line 3: repeats line 2's recording and call id with other values/);
  });

  it('refuses an empty manifest and one with a header only', async () => {
    expect((await refusal('')).message).toMatch(/manifest is empty/);
    expect((await refusal('\n\n')).message).toMatch(/manifest is empty/);
    expect((await refusal('uri,agent\n')).message).toMatch(/line 1: a header and no rows/);
  });

  it('refuses a manifest beyond its bounds of bytes and rows', async () => {
    const csv = `key\n${Array.from({ length: 10 }, (_, i) => `r${i}.wav`).join('\n')}\n`;
    expect((await refusal(csv, { maxBytes: 20 })).message).toMatch(/larger than the 20 bytes/);
    expect((await refusal(csv, { maxRows: 5 })).message).toMatch(/more than 5 rows \(line 7 is row 6\)/);
    expect(await parseManifest(csv, 'b', { limits: { maxRows: 10, maxBytes: csv.length } })).toHaveLength(10);
  });
});

describe('manifest validation: the problems it lists', () => {
  it('lists every problem of the file with its line, not only the first', async () => {
    const csv = [
      'key,direction,call_id',
      'a.wav,inbound,a',
      'b.wav,sideways,b', // line 3: direction
      'c.wav,inbound', // line 4: a cell short
      'd.wav,outbound,../x', // line 5: call id
      '"e\nf.wav",inbound,e', // lines 6-7: a multi-line cell is fine
      ',inbound,g', // line 8: no key
    ].join('\n');
    const err = await refusal(csv);
    expect(err.problems.map((p) => p.replace(/:.*/s, ''))).toEqual([
      'line 3 (direction)',
      'line 4',
      'line 5 (call_id)',
      'line 8',
    ]);
    expect(err.message).toMatch(/4 problems/);
  });

  it('names the line a broken quote opens on, not where the file ends', async () => {
    expect((await refusal('key,agent\na.wav,"alice\nb.wav,bob\nc.wav,carol\n')).message).toBe(
      'manifest refused: line 2: a quote opened here is never closed (the rest was not read)',
    );
  });

  it('lists a bounded number of problems and counts the rest', async () => {
    const csv = `key,direction\n${Array.from({ length: 50 }, (_, i) => `r${i}.wav,sideways`).join('\n')}\n`;
    const err = await refusal(csv);
    expect(err.total).toBe(50);
    expect(err.problems.length).toBeLessThan(50);
    expect(err.message).toMatch(/and \d+ more/);
  });

  it('keeps cell values out of its messages (they reach workflow histories)', async () => {
    const err = await refusal('uri,call_id\ns3://calls/090-1234-5678.wav,c-1\ns3://calls/b.wav,c-1\n');
    expect(err.message).not.toContain('090');
    expect(err.message).not.toContain('c-1');
  });
});

describe('manifest validation: prepareManifest', () => {
  it('prepareManifest stores the pages of a valid file as it reads it', async () => {
    const store = new StreamingStore();
    const csv = `uri\n${Array.from({ length: 5 }, (_, i) => `s3://calls/r${i}.wav`).join('\n')}\n`;
    expect(await prepared(store, csv)).toEqual({ rows: 5, pages: 3 });
    const page = (n: number) => store.json(`parts/manifest/page-00000${n}.json`) as ManifestEntry[];
    expect([0, 1, 2].map((n) => page(n).map((e) => e.line))).toEqual([[2, 3], [4, 5], [6]]);
  });

  it('prepareManifest fails a refused file as a ManifestError with its lines, and a too large one unread', async () => {
    const store = new StreamingStore();
    const err = await prepared(store, 'uri,uri\ns3://calls/a.wav,s3://calls/b.wav\n').catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'ManifestError', nonRetryable: true });
    expect((err as Error).message).toMatch(/line 1: column 'uri' is given twice/);

    const big = new StreamingStore();
    big.head = async (key: string) => ({ key, size: MANIFEST_LIMITS.maxBytes + 1 });
    const tooLarge = await prepared(big, 'uri\ns3://calls/a.wav\n').catch((e: unknown) => e);
    expect((tooLarge as Error).message).toMatch(/larger than the 268,435,456 bytes/);
    expect(big.streams).toBe(0);
  });
});
