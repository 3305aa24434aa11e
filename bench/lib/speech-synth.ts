/**
 * Spoken lines for the speakers benchmark and tests, from two synthesizers (bench/lib/synthesize.py, run in
 * the project's venv: Open JTalk's HTS voice from PyPI pyopenjtalk-plus, espeak-ng from PyPI
 * espeakng-loader). One Python process serves every line; each line's audio is cached on disk by its
 * voice and text, so a corpus is synthesized once.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';

/** The rate of every line's samples. */
export const SPEECH_RATE = 16000;

/** Open JTalk's voice moved as one person differs from another: semitones, formant factor, rate. */
interface JTalkVoice {
  engine: 'openjtalk';
  halfTone: number;
  formant: number;
  speed: number;
}

/** An espeak-ng variant of its Japanese voice: pitch 0–99, words per minute. */
interface EspeakVoice {
  engine: 'espeak';
  variant: string;
  pitch: number;
  speed: number;
}

export type SynthVoice = JTalkVoice | EspeakVoice;

export const voiceText = (v: SynthVoice): string =>
  v.engine === 'openjtalk'
    ? `jtalk ${v.halfTone >= 0 ? '+' : ''}${v.halfTone} st, formants ×${v.formant}, speed ${v.speed}`
    : `espeak ${v.variant} p${v.pitch} s${v.speed}`;

const PYTHON = join(import.meta.dirname, '..', '..', '.tools', 'venv', 'bin', 'python');
const SCRIPT = join(import.meta.dirname, 'synthesize.py');

export class SpeechSynth {
  readonly dir: string;
  private child: ChildProcessWithoutNullStreams | undefined;
  private lines: Interface | undefined;
  private waiting: ((line: string) => void)[] = [];
  private stderr = '';

  constructor(dir: string) {
    this.dir = dir;
  }

  private start(): void {
    if (!existsSync(PYTHON))
      throw new Error(
        `no Python venv at ${PYTHON}: run node scripts/bootstrap.mjs --test (it installs the voices)`,
      );
    const child = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-2000);
    });
    child.on('exit', () => {
      for (const w of this.waiting.splice(0)) w(`error: the synthesizer exited (${this.stderr.trim()})`);
      this.child = undefined;
    });
    this.lines = createInterface({ input: child.stdout });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
    this.child = child;
  }

  /** The line spoken by `voice`, 16-kHz samples trimmed to the audible part. */
  async say(voice: SynthVoice, text: string): Promise<Float32Array> {
    await mkdir(this.dir, { recursive: true });
    const key = createHash('sha256')
      .update(JSON.stringify([voice, text]))
      .digest('hex')
      .slice(0, 24);
    const file = join(this.dir, `${key}.f32`);
    if (!existsSync(file)) {
      if (!this.child) this.start();
      const partial = `${file}.${process.pid}.tmp`;
      const answer = await new Promise<string>((resolve) => {
        this.waiting.push(resolve);
        this.child!.stdin.write(`${JSON.stringify({ ...voice, text, out: partial })}\n`);
      });
      if (answer !== 'ok') throw new Error(`speech synthesis failed: ${answer}`);
      await rename(partial, file);
    }
    const b = await readFile(file);
    return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }

  close(): void {
    this.child?.stdin.end();
    this.lines?.close();
  }
}
