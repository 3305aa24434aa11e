/**
 * Storage writes what other stages computed: publishing a call must not pull in the service client
 * (its tokens, envelopes and sessions). The import graph of every activities/storage/ module, followed
 * transitively through relative imports (type-only ones included) as TypeScript reads them, holds no
 * service/ file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STORAGE = resolve(ROOT, 'activities/storage');

/** Every file reached from `roots` through relative imports, with the file that first imported it. */
function importGraph(roots: readonly string[]): Map<string, string | undefined> {
  const reached = new Map<string, string | undefined>(roots.map((r) => [r, undefined]));
  const queue = [...roots];
  for (let file = queue.shift(); file; file = queue.shift()) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue; // packages and node: built-ins
      const target = resolve(dirname(file), fileName);
      if (!existsSync(target)) throw new Error(`${relative(ROOT, file)} imports a missing ${fileName}`);
      if (!reached.has(target)) {
        reached.set(target, file);
        queue.push(target);
      }
    }
  }
  return reached;
}

/** How `file` was reached: root → … → file. */
function chain(graph: Map<string, string | undefined>, file: string): string {
  const path: string[] = [];
  for (let f: string | undefined = file; f; f = graph.get(f)) path.unshift(relative(ROOT, f));
  return path.join(' → ');
}

describe('activities/storage import graph', () => {
  const roots = readdirSync(STORAGE)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => resolve(STORAGE, f));
  const graph = importGraph(roots);

  it('follows the imports of every storage module (sanity: schemas are reached)', () => {
    expect(roots.length).toBeGreaterThan(5);
    expect([...graph.keys()].some((f) => relative(ROOT, f) === 'schemas/result.ts')).toBe(true);
  });

  it('contains no service/ file', () => {
    const service = [...graph.keys()].filter((f) => relative(ROOT, f).startsWith('service/'));
    expect(service.map((f) => chain(graph, f))).toEqual([]);
  });
});
