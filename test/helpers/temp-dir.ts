/**
 * A temporary directory that removes itself: when the test that made it ends, or, made while a file's
 * tests are collected, after that file's tests. Under `npm test` the system's temp folder is the run's
 * own folder (removed at the end), but a test file run alone would otherwise leave its folders in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a running test: the file's collection.
    afterAll(remove);
  }
  return dir;
}
