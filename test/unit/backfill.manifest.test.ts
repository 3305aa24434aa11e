import { describe, expect, it } from 'vitest';
import { ManifestError, parseChannelMapping, parseManifest } from '../../activities/backfill/manifest.ts';

describe('parseManifest', () => {
  it('resolves uri and key rows and carries every other column into metadata', () => {
    const csv =
      '\ufeffURI,Key,Call ID,agent,direction,started_at,channels,queue\n' +
      's3://other/rec/a.wav,,call-a,alice,inbound,2024-05-01T09:00:00Z,"customer,agent",vip\n' +
      ',rec/b.mp3,,bob,outbound,2024-05-01,,\n';
    const entries = parseManifest(csv, 'callpipe');
    expect(entries).toEqual([
      {
        line: 2,
        bucket: 'other',
        key: 'rec/a.wav',
        callId: 'call-a',
        startedAt: '2024-05-01T09:00:00Z',
        speakers: ['customer', 'agent'],
        metadata: {
          call_id: 'call-a',
          agent: 'alice',
          direction: 'inbound',
          started_at: '2024-05-01T09:00:00Z',
          channels: 'customer,agent',
          queue: 'vip',
        },
      },
      {
        line: 3,
        bucket: 'callpipe',
        key: 'rec/b.mp3',
        callId: undefined,
        startedAt: '2024-05-01',
        speakers: undefined,
        metadata: { agent: 'bob', direction: 'outbound', started_at: '2024-05-01' },
      },
    ]);
  });

  it('names bad rows by line, and refuses a manifest without a key column', () => {
    expect(() => parseManifest('key,direction\na.wav,sideways\n,inbound\n', 'b')).toThrow(
      /2 bad row\(s\): line 2 \(direction\).*; line 3: needs a uri or a key/,
    );
    expect(() => parseManifest('key,call_id\na.wav,../escape\n', 'b')).toThrow(/line 2 \(call_id\)/);
    expect(() => parseManifest('file,agent\na.wav,x\n', 'b')).toThrow(ManifestError);
    expect(() => parseManifest('key,agent\n"a.wav,x\n', 'b')).toThrow(/not valid CSV/);
    expect(parseManifest('key\n', 'b')).toEqual([]);
  });

  it('reads channel mappings with , or |', () => {
    expect(parseChannelMapping('agent | customer')).toEqual(['agent', 'customer']);
  });

  it('takes an s3:// URL in the key column as a URL', () => {
    expect(parseManifest('key\ns3://other/x/a.wav\n', 'b')[0]).toMatchObject({
      bucket: 'other',
      key: 'x/a.wav',
    });
  });
});
