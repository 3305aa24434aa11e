/**
 * Every CALLPIPE_* variable is read in one of two places: the deployment's through loadConfig
 * (schemas/config-loader.ts), a process's own (tool paths, debugging, the stack's hand-over, the emulator
 * command's) through processSettings (schemas/process-settings.ts).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_VARS } from '../../schemas/config-variables.ts';
import { PROCESS_ENV_VARS, mediaTools, processSettings } from '../../schemas/process-settings.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = ['activities', 'cli', 'emulator', 'schemas', 'service', 'workers', 'workflows'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('processSettings', () => {
  it('reads the set variables by their names, an empty one as unset', () => {
    expect(
      processSettings({ CALLPIPE_FFMPEG: '/opt/ffmpeg', CALLPIPE_DEBUG: '1', CALLPIPE_SOX: '' }),
    ).toEqual({ ffmpeg: '/opt/ffmpeg', debug: '1' });
  });

  it('names variables of its own, none of the deployment configuration but the emulator command’s', () => {
    const shared = Object.values(PROCESS_ENV_VARS).filter((name) => name in ENV_VARS);
    expect(shared.sort()).toEqual([
      'CALLPIPE_EMULATOR_FAULTS',
      'CALLPIPE_EMULATOR_FILE_RTF',
      'CALLPIPE_EMULATOR_PHRASEBOOK',
      'CALLPIPE_EMULATOR_SPEED',
    ]);
  });
});

describe('mediaTools', () => {
  it('takes the variables, else the provided builds, else the ones on PATH', () => {
    const provided = { ffmpeg: '/tools/ffmpeg', ffprobe: '/tools/ffprobe' };
    expect(mediaTools({ CALLPIPE_FFMPEG: '/opt/ffmpeg' }, provided)).toEqual({
      ffmpeg: '/opt/ffmpeg',
      ffprobe: '/tools/ffprobe',
    });
    expect(mediaTools({})).toEqual({ ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' });
  });
});

describe('CALLPIPE_* variables', () => {
  it('are read nowhere but the configuration loader and the process settings', () => {
    const readers = SOURCES.flatMap((dir) => files(join(ROOT, dir)))
      .filter((path) => /env(\.|\[['"`])CALLPIPE_/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(ROOT, path));
    expect(readers.sort()).toEqual(['schemas/config-loader.ts', 'schemas/process-settings.ts']);
  });
});
