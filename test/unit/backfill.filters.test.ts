import { describe, expect, it } from 'vitest';
import { extensionOf, filterReason, needsSniffing } from '../../activities/backfill/filters.ts';

describe('backfill filters', () => {
  it('takes audio extensions case-insensitively and leaves out others and folder markers', () => {
    expect(extensionOf('a/b/Call.WAV')).toBe('wav');
    expect(extensionOf('a/b/noext')).toBe('');
    expect(filterReason({ key: 'x/call.WAV', size: 10 })).toBeUndefined();
    // With the default list, an unknown extension is decided by content (sniffed by the listing).
    expect(filterReason({ key: 'x/call.dat', size: 10 })).toBeUndefined();
    // …except what recorders write beside recordings, left out by name without a request.
    expect(filterReason({ key: 'x/notes.txt', size: 10 })).toMatch(/sidecar/);
    expect(needsSniffing('x/notes.txt')).toBe(false);
    expect(needsSniffing('x/call.json')).toBe(false);
    expect(needsSniffing('x/call.dat')).toBe(true);
    expect(needsSniffing('x/recording')).toBe(true);
    expect(needsSniffing('x/call.g722')).toBe(false);
    expect(needsSniffing('x/notes.txt', { extensions: ['wav'] })).toBe(false);
    expect(filterReason({ key: 'x/notes.txt', size: 10 }, { extensions: ['wav'] })).toMatch(
      /extension 'txt'/,
    );
    expect(filterReason({ key: 'x/', size: 0 })).toBe('folder marker');
    expect(filterReason({ key: 'x/a.mp3' }, { extensions: ['.WAV'] })).toMatch(/extension/);
  });

  it('filters by size and by date (from inclusive, until exclusive)', () => {
    const f = { minBytes: 100, maxBytes: 1000, from: '2024-05-01T00:00:00Z', until: '2024-05-02T00:00:00Z' };
    expect(filterReason({ key: 'a.wav', size: 99 }, f)).toMatch(/smaller/);
    expect(filterReason({ key: 'a.wav', size: 1001 }, f)).toMatch(/larger/);
    expect(
      filterReason({ key: 'a.wav', size: 500, date: new Date('2024-05-01T00:00:00Z') }, f),
    ).toBeUndefined();
    expect(filterReason({ key: 'a.wav', size: 500, date: new Date('2024-04-30T23:59:59Z') }, f)).toBe(
      'before from',
    );
    expect(filterReason({ key: 'a.wav', size: 500, date: new Date('2024-05-02T00:00:00Z') }, f)).toMatch(
      /until/,
    );
  });
});
