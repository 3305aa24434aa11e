/**
 * Content sniffing: what a file is, from its first bytes. Containers announce themselves (RIFF/WAVE,
 * `OggS`, `fLaC`, `#!AMR`, an ISO-BMFF `ftyp` box…); headerless telephony formats (raw G.711, G.722,
 * GSM, SLN) do not, and are known only by their extension (input-format.ts). Used by the probe, to
 * trust a container's own header over a misleading extension, and by the batch listings, to take a
 * recording whatever its name says and to say why anything else was left out.
 */

import { open } from 'node:fs/promises';
import { extensionOf } from '../../schemas/media-formats.ts';

/** How many leading bytes the signatures need (an MP3's ID3 tag is skipped by its declared size instead). */
export const SNIFF_BYTES = 4096;

/** The first {@link SNIFF_BYTES} bytes of a local file (fewer when it is shorter). */
export async function readHead(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await file.read(buf, 0, SNIFF_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

type SniffKind = 'audio' | 'video' | 'document' | 'image' | 'archive' | 'text';

export interface Sniffed {
  kind: SniffKind;
  /** A short name for people: `WAV`, `PDF document`, `3GP/MP4`… */
  what: string;
  /**
   * False for signatures a few bytes of headerless audio can match by chance (an MPEG or ADTS frame
   * sync, text-like bytes): enough to take an unnamed object, not to overrule a telephony extension.
   */
  strong: boolean;
}

const ascii = (head: Buffer, at: number, text: string) =>
  head.length >= at + text.length && head.toString('latin1', at, at + text.length) === text;

/** An MPEG audio frame header (MP3/MP2, MPEG-1/2/2.5): sync, a valid layer, bitrate and rate indexes. */
function isMpegAudioFrame(head: Buffer, at: number): boolean {
  if (head.length < at + 4) return false;
  const b1 = head[at + 1]!;
  const b2 = head[at + 2]!;
  const layer = (b1 >> 1) & 3;
  const version = (b1 >> 3) & 3;
  const bitrate = b2 >> 4;
  const rate = (b2 >> 2) & 3;
  return (
    head[at] === 0xff && (b1 & 0xe0) === 0xe0 && layer !== 0 && version !== 1 && bitrate !== 15 && rate !== 3
  );
}

/** An ADTS (raw AAC) header: 12-bit sync, layer 0. */
const isAdts = (head: Buffer) => head.length >= 2 && head[0] === 0xff && (head[1]! & 0xf6) === 0xf0;

/** ISO-BMFF brands of audio-only files (M4A, 3GPP audio recordings). */
const AUDIO_BRANDS = new Set([
  'M4A ',
  'M4B ',
  'mp42',
  'isom',
  '3gp4',
  '3gp5',
  '3gp6',
  '3gp7',
  '3ge6',
  '3g2a',
]);

/** A container this module recognizes, or undefined (headerless audio, or something unknown). */
export function sniffContainer(head: Buffer): Sniffed | undefined {
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return { kind: 'audio', what: 'WAV', strong: true };
  if ((ascii(head, 0, 'RF64') || ascii(head, 0, 'BW64')) && ascii(head, 8, 'WAVE'))
    return { kind: 'audio', what: 'WAV (RF64)', strong: true };
  if (ascii(head, 0, 'FORM') && (ascii(head, 8, 'AIFF') || ascii(head, 8, 'AIFC')))
    return { kind: 'audio', what: 'AIFF', strong: true };
  if (ascii(head, 0, '#!AMR-WB\n')) return { kind: 'audio', what: 'AMR-WB', strong: true };
  if (ascii(head, 0, '#!AMR\n')) return { kind: 'audio', what: 'AMR', strong: true };
  if (ascii(head, 0, '#!AMR_MC1.0\n') || ascii(head, 0, '#!AMR-WB_MC1.0\n'))
    return { kind: 'audio', what: 'multichannel AMR', strong: true };
  if (ascii(head, 0, 'OggS')) return { kind: 'audio', what: 'Ogg', strong: true };
  if (ascii(head, 0, 'fLaC')) return { kind: 'audio', what: 'FLAC', strong: true };
  if (ascii(head, 0, '.snd')) return { kind: 'audio', what: 'Sun/NeXT AU', strong: true };
  if (ascii(head, 0, 'caff')) return { kind: 'audio', what: 'CAF', strong: true };
  if (ascii(head, 0, 'wvpk')) return { kind: 'audio', what: 'WavPack', strong: true };
  if (ascii(head, 0, '#!SILK_V3') || ascii(head, 1, '#!SILK_V3'))
    return { kind: 'audio', what: 'SILK', strong: true };
  if (ascii(head, 0, 'ID3')) return { kind: 'audio', what: 'MP3', strong: true };
  if (ascii(head, 4, 'ftyp')) {
    const brand = head.toString('latin1', 8, 12);
    return AUDIO_BRANDS.has(brand) || brand.startsWith('3g')
      ? { kind: 'audio', what: '3GP/MP4', strong: true }
      : { kind: 'video', what: `MP4 (${brand.trim()})`, strong: true };
  }
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3)
    return { kind: 'audio', what: 'WebM/Matroska', strong: true };
  if (head.length >= 16 && head.toString('hex', 0, 16) === '3026b2758e66cf11a6d900aa0062ce6c')
    return { kind: 'audio', what: 'ASF/WMA', strong: true };
  if (isMpegAudioFrame(head, 0)) return { kind: 'audio', what: 'MP3', strong: false };
  if (isAdts(head)) return { kind: 'audio', what: 'AAC (ADTS)', strong: false };
  // Things that are not recordings, named so that a batch report can say what was left out.
  if (ascii(head, 0, '%PDF')) return { kind: 'document', what: 'PDF document', strong: true };
  if (ascii(head, 0, 'PK\x03\x04'))
    return { kind: 'archive', what: 'ZIP archive (or Office document)', strong: true };
  if (head.length >= 3 && head[0] === 0x1f && head[1] === 0x8b)
    return { kind: 'archive', what: 'gzip archive', strong: true };
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff)
    return { kind: 'image', what: 'JPEG image', strong: true };
  if (ascii(head, 0, '\x89PNG')) return { kind: 'image', what: 'PNG image', strong: true };
  if (ascii(head, 0, 'GIF8')) return { kind: 'image', what: 'GIF image', strong: true };
  if (looksLikeText(head)) return { kind: 'text', what: 'text', strong: false };
  return undefined;
}

/**
 * Why a file named `name` whose content starts with `head` is not a recording, or undefined when its
 * content is audio (or video, whose audio track is processed). For names that say nothing (an unknown
 * extension, or none): a headerless recording cannot be told from its bytes, only from its extension.
 */
export function notARecording(name: string, head: Buffer): string | undefined {
  const ext = extensionOf(name);
  const named = ext ? `extension '${ext}'` : 'no extension';
  if (head.length === 0) return `not a recording: empty (${named})`;
  const sniffed = sniffContainer(head);
  if (sniffed?.kind === 'audio' || sniffed?.kind === 'video') return undefined;
  if (sniffed) return `not a recording: ${sniffed.what} (${named}, checked by content)`;
  return (
    `not a recording: its content is no audio format we know (${named}); a headerless recording ` +
    `needs its extension (.ulaw, .alaw, .g722, .gsm, .sln…)`
  );
}

/** Printable UTF-8 with line breaks and no NUL: a log, a CSV, a JSON or XML sidecar. */
function looksLikeText(head: Buffer): boolean {
  if (head.length < 16) return false;
  const sample = head.subarray(0, Math.min(head.length, 1024));
  if (sample.includes(0)) return false;
  let control = 0;
  for (const b of sample) if (b < 0x09 || (b > 0x0d && b < 0x20)) control += 1;
  if (control > 0) return false;
  return !sample.toString('utf8').includes('\ufffd');
}
