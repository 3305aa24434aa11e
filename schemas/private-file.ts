/**
 * A file of the local stack's that only its user may read: its payload keys, its digest key. Made once
 * with its first content and kept after that (what was encrypted or digested with a key needs that key).
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';

/** Writes `content()` to `path` (0600) when there is no file there; a file there keeps its content, at 0600. */
export function ensurePrivateFile(path: string, content: () => string): void {
  if (!existsSync(path)) writeFileSync(path, content(), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
}
