import { describe, expect, it } from 'vitest';
import { READ_BY_CONTENT, readerArgs, readerOf } from '../../activities/media/input-format.ts';
import { RAW_TELEPHONY_FORMATS, RECORDING_EXTENSIONS, extensionOf } from '../../schemas/media-formats.ts';
import { sniffContainer } from '../../activities/media/sniff.ts';

const wavHead = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(32)]);
/** What a headerless file starts with: mu-law silence and noise, G.722 codewords. */
const rawHead = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 11) % 256));

describe('readerOf', () => {
  it('reads a headerless telephony file as its extension names it, with the demuxer options ffmpeg needs', () => {
    expect(readerOf('calls/2024/asterisk.g722', rawHead)).toEqual({
      format: 'g722',
      options: {},
      repair: null,
    });
    expect(readerOf('x.ULAW', rawHead)).toEqual({
      format: 'mulaw',
      options: { sample_rate: '8000', channels: '1' },
      repair: null,
    });
    expect(readerOf('x.sln16', rawHead).options).toEqual({ sample_rate: '16000', channels: '1' });
    expect(readerOf('x.g726', rawHead)).toMatchObject({ format: 'g726le', options: { code_size: '4' } });
    expect(readerArgs(readerOf('x.alaw', rawHead))).toEqual([
      '-f',
      'alaw',
      '-sample_rate',
      '8000',
      '-channels',
      '1',
    ]);
  });

  it('lets a container header overrule a telephony extension, and reads everything else by content', () => {
    expect(readerOf('wav-named.ulaw', wavHead)).toEqual(READ_BY_CONTENT);
    expect(readerOf('call.wav', rawHead)).toEqual(READ_BY_CONTENT);
    expect(readerOf('no-extension', rawHead)).toEqual(READ_BY_CONTENT);
    expect(readerArgs(READ_BY_CONTENT)).toEqual([]);
    expect(readerArgs(undefined)).toEqual([]);
  });

  it('does not let a chance frame sync in headerless audio overrule its extension', () => {
    // Bytes of mu-law that happen to look like an MPEG audio frame header.
    const sync = Buffer.from([0xff, 0xfb, 0x90, 0x64, ...rawHead]);
    expect(sniffContainer(sync)).toMatchObject({ what: 'MP3', strong: false });
    expect(readerOf('x.ulaw', sync).format).toBe('mulaw');
  });

  it('has one entry per extension, each naming a demuxer', () => {
    for (const [ext, f] of Object.entries(RAW_TELEPHONY_FORMATS)) {
      expect(ext).toMatch(/^[a-z0-9]+$/);
      expect(f.demuxer, ext).toMatch(/^[a-z0-9_]+$/);
    }
    expect(extensionOf('a/b.c/d')).toBe('');
    expect(extensionOf('a/.hidden')).toBe('');
    expect(extensionOf('a/B.G722')).toBe('g722');
    // A batch takes every one of them by name.
    for (const ext of ['g722', 'gsm', 'ulaw', 'alaw', 'amr', 'opus', 'webm', '3gp'])
      expect(RECORDING_EXTENSIONS).toContain(ext);
  });
});

describe('sniffContainer', () => {
  const cases: [string, Buffer, string | undefined, string | undefined][] = [
    ['WAV', wavHead, 'audio', 'WAV'],
    ['AMR', Buffer.from('#!AMR\n<\x00\x00\x00', 'latin1'), 'audio', 'AMR'],
    ['AMR-WB', Buffer.from('#!AMR-WB\n\x04\x00', 'latin1'), 'audio', 'AMR-WB'],
    ['Ogg', Buffer.from('OggS\x00\x02', 'latin1'), 'audio', 'Ogg'],
    ['FLAC', Buffer.from('fLaC\x00\x00\x00\x22', 'latin1'), 'audio', 'FLAC'],
    ['3GP', Buffer.from('\x00\x00\x00\x1cftyp3gp4\x00\x00\x02\x00', 'latin1'), 'audio', '3GP/MP4'],
    ['M4A', Buffer.from('\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00', 'latin1'), 'audio', '3GP/MP4'],
    ['ID3', Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), 'audio', 'MP3'],
    ['WebM', Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f]), 'audio', 'WebM/Matroska'],
    ['PDF', Buffer.from('%PDF-1.7\n%\xe2\xe3', 'latin1'), 'document', 'PDF document'],
    ['JPEG', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), 'image', 'JPEG image'],
    ['CSV', Buffer.from('callId,agent,started_at\n1,alice,2024-05-01\n'), 'text', 'text'],
    ['headerless', rawHead, undefined, undefined],
  ];
  it.each(cases)('%s', (_name, head, kind, what) => {
    const sniffed = sniffContainer(head);
    expect(sniffed?.kind).toBe(kind);
    expect(sniffed?.what).toBe(what);
  });
});
