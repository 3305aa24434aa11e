/**
 * Formats of recordings by file extension: the one table of headerless telephony formats (what PBXs and
 * call recorders write, with what ffmpeg needs to read each: activities/media/input-format.ts), and the
 * extensions a batch lists as recordings without looking inside (activities/backfill/). Data only.
 */

export interface RawFormat {
  /** What it is, for people. */
  what: string;
  /** ffmpeg's demuxer (`-f`). */
  demuxer: string;
  /** Demuxer options, as ffmpeg spells them (`sample_rate`, `channels`, `code_size`). */
  options: Record<string, string>;
}

const g711 = (demuxer: 'mulaw' | 'alaw', what: string): RawFormat => ({
  what,
  demuxer,
  options: { sample_rate: '8000', channels: '1' },
});
const sln = (rate: number): RawFormat => ({
  what: `signed linear 16-bit PCM, ${rate} Hz (Asterisk .sln)`,
  demuxer: 's16le',
  options: { sample_rate: String(rate), channels: '1' },
});

/**
 * Headerless telephony formats by extension (lower case, no dot), with what ffmpeg needs to read each.
 * Rates and packings are the ones Asterisk and common call recorders write: G.711 and GSM at 8 kHz
 * mono; G.722 is coded at 16 kHz; `.sln` is 8 kHz and `.slnNN` names its rate; G.726 at 32 kbit/s in
 * RFC 3551's little-endian packing.
 */
export const RAW_TELEPHONY_FORMATS: Readonly<Record<string, RawFormat>> = {
  ulaw: g711('mulaw', 'G.711 mu-law, 8 kHz'),
  mulaw: g711('mulaw', 'G.711 mu-law, 8 kHz'),
  ul: g711('mulaw', 'G.711 mu-law, 8 kHz'),
  pcmu: g711('mulaw', 'G.711 mu-law, 8 kHz'),
  alaw: g711('alaw', 'G.711 A-law, 8 kHz'),
  al: g711('alaw', 'G.711 A-law, 8 kHz'),
  pcma: g711('alaw', 'G.711 A-law, 8 kHz'),
  sln: sln(8000),
  slin: sln(8000),
  sln12: sln(12000),
  sln16: sln(16000),
  sln24: sln(24000),
  sln32: sln(32000),
  sln44: sln(44100),
  sln48: sln(48000),
  sln96: sln(96000),
  g722: { what: 'G.722, 16 kHz', demuxer: 'g722', options: {} },
  gsm: { what: 'GSM 06.10 full rate, 8 kHz', demuxer: 'gsm', options: { sample_rate: '8000' } },
  g729: { what: 'G.729, 8 kHz', demuxer: 'g729', options: {} },
  g723: { what: 'G.723.1, 8 kHz', demuxer: 'g723_1', options: {} },
  g726: {
    what: 'G.726 32 kbit/s (RFC 3551 packing), 8 kHz',
    demuxer: 'g726le',
    options: { code_size: '4', sample_rate: '8000' },
  },
};

/** Lower-case extension of a file or object name, without the dot ('' when there is none). */
export function extensionOf(name: string): string {
  const base = name.split('/').pop() ?? name;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The headerless format an extension names, or undefined. */
export function rawFormatOf(name: string): RawFormat | undefined {
  const ext = extensionOf(name);
  return Object.hasOwn(RAW_TELEPHONY_FORMATS, ext) ? RAW_TELEPHONY_FORMATS[ext] : undefined;
}

/** Containers ffmpeg reads by their content, by the extensions recorders and phones give them. */
const CONTAINER_EXTENSIONS = [
  'wav',
  'mp3',
  'm4a',
  'mp4',
  'aac',
  'ogg',
  'oga',
  'opus',
  'flac',
  'webm',
  'mka',
  'wma',
  'amr',
  'awb',
  '3gp',
  '3ga',
  'aif',
  'aiff',
  'au',
  'caf',
  'wv',
] as const;

/**
 * Extensions of what call recorders write beside recordings (metadata, transcripts, checksums, images,
 * archives): left out by name, never fetched to sniff, so a bucket of recordings with one JSON or XML
 * sidecar each costs no extra request per sidecar and its report is not half "not a recording" rows.
 */
export const SIDECAR_EXTENSIONS: readonly string[] = [
  'txt',
  'log',
  'json',
  'jsonl',
  'xml',
  'csv',
  'tsv',
  'yaml',
  'yml',
  'md',
  'html',
  'htm',
  'pdf',
  'vtt',
  'srt',
  'parquet',
  'md5',
  'sha1',
  'sha256',
  'sig',
  'png',
  'jpg',
  'jpeg',
  'gif',
  'zip',
  'gz',
  'tar',
  'tmp',
  'part',
];

/** Extensions taken as recordings without reading them: containers and the headerless formats. */
export const RECORDING_EXTENSIONS: readonly string[] = [
  ...CONTAINER_EXTENSIONS,
  ...Object.keys(RAW_TELEPHONY_FORMATS),
];
