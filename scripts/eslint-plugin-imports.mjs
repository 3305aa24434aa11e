// ESLint rules over callpipe's own imports (relative specifiers), so the layering of docs/design.md is checked
// by a machine: `import-table` (which top-level folder may import which, given as the rule's options) and
// `no-cycle` (no module reaches itself through runtime imports). Type-only imports are erased by Node's
// type stripping, so they never make a cycle, and the table can allow a folder only them.
// No dependencies beyond TypeScript's parser: the graph of about 500 files is read once per ESLint run.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|mts|js|mjs)$/;
const SKIP = new Set(['node_modules', '.tools', '.callpipe', '.git', '.test-artifacts', '.bench-cache']);

/** The top-level folder of an absolute path inside `root` ('' for a file at the root). */
function topFolder(root, file) {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0] : '';
}

/** The file a relative specifier names, when it is one of ours. */
function resolveSpecifier(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(fromFile), specifier);
  return existsSync(target) && statSync(target).isFile() ? target : undefined;
}

// ---- import-table ----------------------------------------------------------------------------------------

const importTable = {
  meta: {
    type: 'problem',
    docs: { description: "imports between top-level folders follow docs/design.md's layout table" },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          // folder → the folders it may import at runtime ('*': any).
          allow: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          // folder → the folders it may import types from only.
          allowTypes: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
        },
        required: ['root', 'allow'],
        additionalProperties: false,
      },
    ],
    messages: {
      forbidden: "{{from}}/ may not import {{to}}/ (docs/design.md, Layout): '{{specifier}}'",
      typesOnly:
        "{{from}}/ may import only types from {{to}}/ (docs/design.md, Layout): use `import type` for '{{specifier}}'",
    },
  },
  create(context) {
    const { root, allow, allowTypes = {} } = context.options[0];
    const file = context.filename;
    const from = topFolder(root, file);
    const allowed = allow[from];
    if (!allowed || allowed.includes('*')) return {};

    function check(node, specifier, typeOnly) {
      if (typeof specifier !== 'string') return;
      const target = resolveSpecifier(file, specifier);
      if (!target) return;
      const to = topFolder(root, target);
      if (to === from || !Object.hasOwn(allow, to) || allowed.includes(to)) return;
      if ((allowTypes[from] ?? []).includes(to)) {
        if (!typeOnly) context.report({ node, messageId: 'typesOnly', data: { from, to, specifier } });
        return;
      }
      context.report({ node, messageId: 'forbidden', data: { from, to, specifier } });
    }
    const typeOnlyImport = (node) =>
      node.importKind === 'type' ||
      (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'));
    return {
      ImportDeclaration: (node) => check(node, node.source.value, typeOnlyImport(node)),
      ExportNamedDeclaration: (node) =>
        node.source && check(node, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, false),
    };
  },
};

// ---- no-cycle --------------------------------------------------------------------------------------------

/** Runtime imports of one file: import and export declarations that are not type-only, and import(). */
function runtimeImports(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          clause.namedBindings &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      if (!node.isTypeOnly) out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.map((s) => resolveSpecifier(file, s)).filter(Boolean);
}

function sourceFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.d.mts'))
      out.push(path);
  }
  return out;
}

/** Per root: each file that lies on a cycle → that cycle (Tarjan's strongly connected components). */
const cyclesByRoot = new Map();
function cycles(root) {
  if (cyclesByRoot.has(root)) return cyclesByRoot.get(root);
  const graph = new Map(sourceFiles(root).map((f) => [f, runtimeImports(f)]));
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = new Map();
  let next = 0;
  const strongConnect = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) for (const f of component) found.set(f, component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) strongConnect(v);
  cyclesByRoot.set(root, found);
  return found;
}

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no import cycles among our modules (type-only imports excepted)' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' } },
        required: ['root'],
        additionalProperties: false,
      },
    ],
    messages: { cycle: 'import cycle: this module reaches itself through {{members}}' },
  },
  create(context) {
    const { root } = context.options[0];
    const component = cycles(root).get(context.filename);
    if (!component) return {};
    return {
      Program(node) {
        const members = component
          .map((f) => relative(root, f))
          .sort()
          .join(', ');
        context.report({ node, messageId: 'cycle', data: { members } });
      },
    };
  },
};

export default {
  meta: { name: 'callpipe-imports' },
  rules: { 'import-table': importTable, 'no-cycle': noCycle },
};
