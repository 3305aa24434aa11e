/**
 * What `callpipe process` checks of a local file before uploading it (cli/local-recording.ts, issue 41):
 * the file itself, regular, readable, not empty, and audio by its content; headerless formats and
 * containers the sniffer does not know pass by their extension (the workers' probe decides).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localRecordingProblem } from '../../cli/local-recording.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-local-recording-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const TEXT = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';
const WAV = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt '), Buffer.alloc(64)]);

describe('a local recording before upload', () => {
  it('is refused as a symbolic link, naming its target, whatever it points to', async () => {
    const audio = file('real.wav', WAV);
    const link = join(dir, 'link.wav');
    symlinkSync(audio, link);
    expect(await localRecordingProblem(link)).toBe(
      `a symbolic link (to ${audio}): not followed; give the recording itself`,
    );
  });

  it('is refused when it is no regular file, empty or missing', async () => {
    mkdirSync(join(dir, 'folder.wav'));
    expect(await localRecordingProblem(join(dir, 'folder.wav'))).toBe('not a file');
    expect(await localRecordingProblem(file('empty.wav', ''))).toBe('the file is empty (0 bytes)');
    expect(await localRecordingProblem(join(dir, 'missing.wav'))).toBe('no such file');
  });

  it('is refused by its content when that is text, a document or an archive, whatever its name', async () => {
    expect(await localRecordingProblem(file('passwd.wav', TEXT))).toBe(
      "not a recording: text (extension 'wav', checked by content)",
    );
    expect(await localRecordingProblem(file('scan.mp3', `%PDF-1.7\n${TEXT}`))).toBe(
      "not a recording: PDF document (extension 'mp3', checked by content)",
    );
    expect(await localRecordingProblem(file('notes.bin', Buffer.alloc(512, 0x01)))).toMatch(
      /^not a recording: its content is no audio format we know \(extension 'bin'\)/,
    );
  });

  it('is taken when its content is audio, or its extension names a format the content cannot show', async () => {
    expect(await localRecordingProblem(file('call.wav', WAV))).toBeUndefined();
    expect(await localRecordingProblem(file('call.dat', WAV))).toBeUndefined();
    // Headerless mu-law can look like anything: its extension decides.
    expect(await localRecordingProblem(file('call.ulaw', TEXT))).toBeUndefined();
    // A container the sniffer does not know, named as a recording: the workers' probe decides.
    expect(await localRecordingProblem(file('call.m4a', Buffer.alloc(512, 0x01)))).toBeUndefined();
  });
});
