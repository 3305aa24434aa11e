/**
 * What ffmpeg and ffprobe may open when they read a recording: the recording, and nothing else. Some of
 * ffmpeg's demuxers follow what a file names (an HLS playlist its segments, a concat list its files, an
 * image pattern its frames, an SDP its network streams, a `.idx` its `.sub`), and a recording is user
 * input: a playlist named `.wav` that points at a FIFO on the worker held a probe slot until cancelled.
 * So every run on a recording gets
 *
 * - `-protocol_whitelist file`: nothing but the local file, never a URL, a pipe or a nested protocol
 *   (whitelists propagate to every resource a demuxer opens);
 * - `-format_whitelist`: every demuxer of the installed ffmpeg except those that open other resources
 *   ({@link REFERENCING_DEMUXERS}) and capture devices. A list of what is allowed, read once from the
 *   binary, rather than of what is refused: ffmpeg then refuses a demuxer it has no right to use even
 *   when its own probing picks it.
 *
 * Playlists, concat lists, SDP and manifests are text, and no recording is: such content is refused
 * before any tool runs ({@link refusedContent}), with a reason that names what it is.
 */
import { execFileSync } from 'node:child_process';
import { childEnv } from '../../schemas/child-env.ts';
import { ffmpegBinary } from './ffmpeg.ts';

/**
 * Demuxers that open files or addresses their input names (or run code): never used on a recording.
 * Capture devices (listed by ffmpeg among demuxers) read the host's hardware and are left out too.
 */
const REFERENCING_DEMUXERS: ReadonlySet<string> = new Set([
  'hls',
  'dash',
  'concat',
  'imf',
  'image2',
  'vobsub',
  'sdp',
  'rtp',
  'rtsp',
  'sap',
  'webm_dash_manifest',
  'lavfi',
  'avisynth',
  'vapoursynth',
  // capture devices
  'alsa',
  'android_camera',
  'avfoundation',
  'decklink',
  'dshow',
  'fbdev',
  'gdigrab',
  'iec61883',
  'jack',
  'kmsgrab',
  'libcdio',
  'libdc1394',
  'openal',
  'oss',
  'pulse',
  'sndio',
  'video4linux2',
  'v4l2',
  'vfwcap',
  'x11grab',
  'xcbgrab',
]);

/**
 * Used when the binary cannot list its demuxers: the containers and headerless formats callpipe reads
 * (docs/recordings.md, schemas/media-formats.ts), so a failure to list narrows, never widens.
 */
const FALLBACK_DEMUXERS = [
  'wav', 'w64', 'aiff', 'amr', 'amrnb', 'amrwb', 'ogg', 'flac', 'au', 'caf', 'wv', 'mp3', 'aac', 'mov',
  'matroska', 'asf', 'avi', 'mpegts', 'mpeg', 'flv', 'ac3', 'eac3', 'mulaw', 'alaw', 'g722', 'gsm',
  'g729', 'g723_1', 'g726', 'g726le', 's16le', 'sln', 'nistsphere', 'voc',
]; // prettier-ignore

const allowedByBinary = new Map<string, string>();

/** Demuxer names of `ffmpeg -demuxers` (a name may hold commas: `mov,mp4,m4a,3gp,3g2,mj2`). */
export function demuxersOf(listing: string): string[] {
  const names: string[] = [];
  for (const line of listing.split('\n')) {
    const m = /^\s*D\S*\s+(\S+)\s/.exec(line);
    if (m && m[1] !== '=') names.push(m[1]!);
  }
  return names;
}

/** The demuxers a recording may be read with, as ffmpeg's `-format_whitelist` value. */
export function allowedDemuxers(): string {
  const binary = ffmpegBinary();
  let allowed = allowedByBinary.get(binary);
  if (allowed === undefined) {
    let names: string[];
    try {
      // Once per binary and process, before the first run: a few milliseconds.
      const listing = execFileSync(binary, ['-hide_banner', '-demuxers'], {
        encoding: 'utf8',
        timeout: 30_000,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: childEnv(),
      });
      names = demuxersOf(listing);
    } catch {
      names = [];
    }
    if (names.length === 0) names = FALLBACK_DEMUXERS;
    allowed = names
      .flatMap((name) => (name.split(',').some((n) => REFERENCING_DEMUXERS.has(n)) ? [] : name.split(',')))
      .join(',');
    allowedByBinary.set(binary, allowed);
  }
  return allowed;
}

/** ffmpeg's and ffprobe's input options (before `-i`) that keep a run to the one local file. */
export function inputPolicyArgs(): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', allowedDemuxers()];
}

/**
 * The reason ffmpeg refused a demuxer of the policy, from its stderr (`[hls @ 0x…] Format not on
 * whitelist '…'`), or undefined.
 */
export function refusedDemuxerOf(stderr: string): string | undefined {
  const m = /\[([\w,]+) @ [^\]]*\] Format not on whitelist/.exec(stderr);
  if (!m) return undefined;
  return `its format (${m[1]}) reads other files or addresses, which callpipe does not open`;
}

/**
 * Why content that starts with `head` is refused before any tool reads it: text that names other
 * resources (an HLS or M3U playlist, an ffmpeg concat list, an SDP, an XML manifest). Undefined for
 * anything else.
 */
export function refusedContent(head: Buffer): string | undefined {
  const text = head.toString('latin1', 0, Math.min(head.length, 512)).replace(/^\ufeff|^\xef\xbb\xbf/, '');
  const start = text.trimStart();
  if (/^#EXTM3U/i.test(start)) return 'an HLS/M3U playlist, which names other files: not a recording';
  if (/^ffconcat/i.test(start)) return 'an ffmpeg concat list, which names other files: not a recording';
  if (/^v=0\r?\n/.test(start)) return 'an SDP session description (network streams): not a recording';
  if (/^<\?xml|^<MPD|^<[A-Za-z]/.test(start)) return 'an XML document (a manifest?): not a recording';
  return undefined;
}
