/**
 * Scratch files of this process. Every temporary file callpipe's own code makes (tracks being staged, the
 * legs of a telephone path, a body on its way to S3, masked audio) lives in one folder per process,
 * `<temp>/callpipe-scratch-<pid>-<random>`, removed when the process exits. A process killed with SIGKILL
 * runs no exit handler, so the next callpipe process to start on the host sweeps the folders whose
 * process is gone ({@link sweepScratch}): only a live pid can own one.
 */
import { mkdtempSync, readdirSync, rmSync, lstatSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'callpipe-scratch-';
const OWNED = /^callpipe-scratch-(\d+)-[\w]+$/;

let root: string | undefined;

/** This process's scratch folder, made on first use (0700, as mkdtemp makes it) and removed at exit. */
export function scratchRoot(): string {
  if (root) return root;
  const made = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
  root = made;
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  return made;
}

/** A new folder for one piece of work, inside the process's scratch folder; the caller removes it when done. */
export function makeScratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(scratchRoot(), prefix));
}

/** A path for one file inside the process's scratch folder (the name must be unique to the caller). */
export function scratchPath(name: string): string {
  return join(scratchRoot(), name);
}

/** Whether a process with this pid is alive (one of another user's counts: it cannot be signalled, but lives). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the scratch folders under `dir` (the temp folder) whose process is gone and that belong to this
 * user; returns their paths. Called when a worker process starts.
 */
export function sweepScratch(dir: string = tmpdir()): string[] {
  const uid = process.getuid?.();
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = OWNED.exec(name)?.[1];
    if (!pid || Number(pid) === process.pid || alive(Number(pid))) continue;
    const path = join(dir, name);
    try {
      const info = lstatSync(path);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone already, or swept by another process starting at the same moment.
    }
  }
  return removed;
}
