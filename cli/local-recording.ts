/**
 * What `callpipe process` checks of a local file before uploading it: the file itself (a symbolic link
 * is refused, naming its target: following one would upload whatever it points to, `/etc/passwd`
 * included), a regular readable file, not empty, and audio by its content (activities/media/sniff.ts:
 * text, documents, images and archives are refused whatever their name). Headerless telephony formats
 * cannot be told from their bytes and are taken by their extension, as are containers the sniffer does
 * not know: the worker's probe still decides, and an upload whose call fails is removed (process.ts).
 */
import { constants } from 'node:fs';
import { access, lstat, readlink } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { notARecording, readHead, sniffContainer } from '../activities/media/sniff.ts';
import { extensionOf, RAW_TELEPHONY_FORMATS, RECORDING_EXTENSIONS } from '../schemas/media-formats.ts';

/** Why a symbolic link is not followed, naming its target. */
export async function symlinkProblem(path: string): Promise<string> {
  const target = await readlink(path).catch(() => undefined);
  return `a symbolic link${target ? ` (to ${target})` : ''}: not followed; give the recording itself`;
}

/** What is wrong with a local file as a recording to upload, or undefined. */
export async function localRecordingProblem(input: string): Promise<string | undefined> {
  const path = resolve(input);
  const info = await lstat(path).catch(() => undefined);
  if (!info) return 'no such file';
  if (info.isSymbolicLink()) return symlinkProblem(path);
  if (!info.isFile()) return 'not a file';
  if (info.size === 0) return 'the file is empty (0 bytes)';
  const readable = await access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
  if (!readable) return 'not readable (permission denied)';
  const ext = extensionOf(path);
  if (Object.hasOwn(RAW_TELEPHONY_FORMATS, ext)) return undefined;
  const head = await readHead(path);
  const sniffed = sniffContainer(head);
  if (sniffed?.kind === 'audio' || sniffed?.kind === 'video') return undefined;
  if (!sniffed && RECORDING_EXTENSIONS.includes(ext)) return undefined;
  return notARecording(basename(path), head);
}
