/**
 * The repository stands alone: a public clone has nothing beside it, so no tracked file may read a path
 * outside the clone or name the folder that once sat beside it. Checked on every tracked text file.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && /\.(ts|mts|mjs|js|json|md|yaml|yml|sh|py|toml)$|^\.ci\/|^\.env/.test(f));

// The history of what changed names what once was: a record, not a reference to follow.
const RECORDS = new Set(['CHANGELOG.md']);

/** The sibling folder of design documents, spec and recorded responses (spelled so this file does not name it). */
const SIBLING_DIR = ['..', 'sha' + 'red'].join('/');
const SIBLING = new RegExp(
  `${SIBLING_DIR.replaceAll('.', '\\.')}\\b|(?<![\\w./-])${SIBLING_DIR.slice(3)}/(golden|spec|hooks|DESIGN|NOTES|STYLE)\\b`,
);
/** A relative file path (a name after the `../`s) in a string literal or a Markdown link. */
const RELATIVE = /(?<=['"`(])((?:\.\.\/)+(?!\.\.\/)[\w.-][\w./-]*)/g;

function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (SIBLING.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    for (const m of line.matchAll(RELATIVE)) {
      const target = relative(root, resolve(root, dirname(file), m[1]!));
      if (target === '..' || target.startsWith(`..${sep}`))
        found.push(`${file}:${i + 1}: ${m[1]} leaves the repository`);
    }
  });
  return found;
}

describe('the repository stands alone', () => {
  it('finds the tracked files it checks', () => {
    expect(tracked).toContain('package.json');
    expect(tracked.length).toBeGreaterThan(100);
  });

  it('no tracked file reads or names a path outside the repository', () => {
    const found = tracked
      .filter((f) => !RECORDS.has(f))
      .flatMap((f) => outsideReferences(f, readFileSync(resolve(root, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check catches both kinds of reference', () => {
    expect(
      outsideReferences('test/unit/x.ts', `new URL('../../${SIBLING_DIR}/golden/a.json', import.meta.url)`),
    ).toHaveLength(2);
    expect(outsideReferences('docs/x.md', 'see [the design](../../elsewhere/DESIGN.md)')).toHaveLength(1);
    expect(outsideReferences('test/unit/x.ts', "import '../helpers/cli.ts'")).toEqual([]);
  });
});
