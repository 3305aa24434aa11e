/**
 * What the pages inline so they open anywhere with no server and no network (a file, an S3 link, a
 * mirror): the charting library (uPlot, from npm: about 50 KB minified, against Chart.js's 200 KB, and
 * maintained since 2019) and our own small client scripts, read once per process from node_modules and
 * from `client/` beside this file.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const cache = new Map<string, string>();

function once(key: string, read: () => string): string {
  let text = cache.get(key);
  if (text === undefined) {
    text = read();
    cache.set(key, text);
  }
  return text;
}

/** A script's text made safe inside `<script>`: no `</script` can close it early. */
function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1');
}

export function uplotScript(): string {
  return once('uplot.js', () =>
    scriptSafe(readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8')),
  );
}

export function uplotStyle(): string {
  return once('uplot.css', () => readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'));
}

/** One of our browser scripts (`client/<name>.js`), for the page that uses it. */
export function clientScript(name: 'call-page' | 'night-report' | 'common'): string {
  return once(`client:${name}`, () =>
    scriptSafe(readFileSync(fileURLToPath(new URL(`./client/${name}.js`, import.meta.url)), 'utf8')),
  );
}
