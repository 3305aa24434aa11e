import { describe, expect, it } from 'vitest';
import { ManifestError, parseChannelMapping, parseManifest } from '../../activities/backfill/manifest.ts';

describe('parseManifest', () => {
  it('resolves uri and key rows and carries every other column into metadata', async () => {
    const csv =
      '\ufeffURI,Key,Call ID,agent,direction,started_at,channels,queue\n' +
      's3://other/rec/a.wav,,call-a,alice,inbound,2024-05-01T09:00:00Z,"customer,agent",vip\n' +
      ',rec/b.mp3,,bob,outbound,2024-05-01,,\n';
    const entries = await parseManifest(csv, 'callpipe');
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

  it('names bad rows by line, and refuses a manifest without a key column', async () => {
    await expect(parseManifest('key,direction\na.wav,sideways\n,inbound\n', 'b')).rejects.toThrow(
      /2 problems:\n {2}line 2 \(direction\).*\n {2}line 3: needs a uri or a key/,
    );
    await expect(parseManifest('key,call_id\na.wav,../escape\n', 'b')).rejects.toThrow(/line 2 \(call_id\)/);
    await expect(parseManifest('file,agent\na.wav,x\n', 'b')).rejects.toThrow(ManifestError);
    await expect(parseManifest('key,agent\n"a.wav,x\n', 'b')).rejects.toThrow(/line 2: a quote opened here/);
  });

  it('reads channel mappings with , or |', () => {
    expect(parseChannelMapping('agent | customer')).toEqual(['agent', 'customer']);
  });

  it('takes an s3:// URL in the key column as a URL', async () => {
    expect((await parseManifest('key\ns3://other/x/a.wav\n', 'b'))[0]).toMatchObject({
      bucket: 'other',
      key: 'x/a.wav',
    });
  });
});
