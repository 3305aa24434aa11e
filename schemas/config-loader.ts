/**
 * Loading the configuration (schemas/config.ts): its one schema, read from `CALLPIPE_*` environment variables, the standard
 * variables of the tools callpipe talks to (`AWS_*`, `TEMPORAL_*`), an optional JSON config file
 * (`CALLPIPE_CONFIG`, or `callpipe.config.json` in the working directory), those tools' own files (the AWS
 * shared files, read by the AWS SDK; Temporal's TOML profile) and defaults. Precedence, as AWS's and
 * Temporal's own tools rank theirs (variables over files): CALLPIPE_* variable > standard variable >
 * config file > the tool's file > default. An empty CALLPIPE_* variable (or `null`/`""` in the file) clears
 * the value beneath it; an empty AWS_* or TEMPORAL_* variable is unset. The table of every source is in
 * docs/configuration.md.
 *
 * S3 credentials are one group: the strongest source that says anything about them (keys, a session
 * token or a profile) decides all of them, so a key from one source never pairs with a secret from
 * another. When callpipe's own sources name no keys, the S3 client gets none and the AWS SDK's default
 * provider chain finds them the way the AWS CLI does (AWS_* keys, AWS_PROFILE and the shared files with
 * SSO and credential_process, web identity, container and instance roles).
 *
 * Temporal's sources (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*,
 * TEMPORAL_GRPC_META_*, TEMPORAL_PROFILE and the TOML file of TEMPORAL_CONFIG_FILE or
 * ~/.config/temporalio/temporal.toml) are read by Temporal's own `@temporalio/envconfig`, so callpipe
 * resolves a connection exactly as the `temporal` CLI does; CALLPIPE_TEMPORAL_ADDRESS and _NAMESPACE stay
 * as overrides.
 *
 * Every value fails fast with the name of the variable that carried it, so a typo in a nightly cron
 * environment stops the run at start-up rather than at 3 a.m. in the middle of a batch.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadClientConfigProfile, type ClientConfigProfile } from '@temporalio/envconfig';
import { configSchema, DEFAULTS, type Config } from './config.ts';
import { ENV_VARS } from './config-variables.ts';

/**
 * Standard AWS variables callpipe reads itself, beneath CALLPIPE_* and above the config file; the first
 * listed for a path wins (AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL, AWS_REGION over AWS_DEFAULT_REGION, as
 * in the AWS CLI). AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true drops the endpoint ones, as in the SDK.
 */
const AWS_VARS: [name: string, path: string][] = [
  ['AWS_ENDPOINT_URL_S3', 's3.endpoint'],
  ['AWS_ENDPOINT_URL', 's3.endpoint'],
  ['AWS_REGION', 's3.region'],
  ['AWS_DEFAULT_REGION', 's3.region'],
];

/**
 * AWS variables that choose credentials. callpipe does not read their values: the SDK's provider chain
 * does (AWS_PROFILE over the keys, as in the AWS CLI). Their presence only outranks the config file's keys.
 */
const AWS_CREDENTIAL_VARS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
];

/** The S3 credential settings, decided together by the strongest source that names any of them. */
const CREDENTIAL_KEYS = ['accessKeyId', 'secretAccessKey', 'sessionToken', 'profile'] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    node[part] = { ...((node[part] as Tree | undefined) ?? {}) };
    node = node[part] as Tree;
  }
  node[parts.at(-1)!] = value;
}

function getPath(tree: Tree, path: string): unknown {
  return path.split('.').reduce<unknown>((node, part) => (node as Tree | undefined)?.[part], tree);
}

/**
 * `over` on `base`; an `undefined` in `over` clears what `base` had. A certificate given as a file or as
 * PEM (`{ path }`, `{ data }`) is one value: a stronger source's file replaces a weaker one's PEM.
 */
function mergeDeep(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isSubtree(value) && isSubtree(prev) ? mergeDeep(prev as Tree, value as Tree) : value;
  }
  return out;
}

function isSubtree(value: unknown): boolean {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && !('path' in value) && !('data' in value)
  );
}

/** A Temporal profile as a config tree, only what it sets (an `undefined` would clear a weaker source). */
function temporalTree(profile: ClientConfigProfile): Tree {
  const defined = (tree: object): Tree =>
    Object.fromEntries(Object.entries(tree).filter(([, value]) => value !== undefined));
  const { address, namespace, apiKey, tls, grpcMeta } = profile;
  const values = defined({ address, namespace, apiKey, tls: tls && defined(tls), grpcMeta });
  return Object.keys(values).length ? { temporal: values } : {};
}

/**
 * Temporal's own sources, read by `@temporalio/envconfig` as the `temporal` CLI reads them, apart: the TOML
 * profile (rank: the tool's file) and the TEMPORAL_* variables (rank: standard variables), so callpipe's
 * config file ranks between them. Empty variables count as unset.
 */
function temporalSources(env: NodeJS.ProcessEnv): { file: Tree; variables: Tree; profile: string } {
  const vars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const profile = vars.TEMPORAL_PROFILE ?? 'default';
  let fromFile: ClientConfigProfile;
  try {
    fromFile = loadClientConfigProfile({
      profile: vars.TEMPORAL_PROFILE,
      disableEnv: true,
      overrideEnvVars: vars,
    });
  } catch (err) {
    const where = vars.TEMPORAL_CONFIG_FILE ?? 'the Temporal config file';
    throw new ConfigError(`Temporal profile '${profile}' in ${where}: ${(err as Error).message}`);
  }
  const fromEnv = loadClientConfigProfile({ disableFile: true, overrideEnvVars: vars });
  return { file: temporalTree(fromFile), variables: temporalTree(fromEnv), profile };
}

/** Which TEMPORAL_* variable carries a setting, for error messages. */
const TEMPORAL_VARS: Record<string, string> = {
  'temporal.address': 'TEMPORAL_ADDRESS',
  'temporal.namespace': 'TEMPORAL_NAMESPACE',
  'temporal.apiKey': 'TEMPORAL_API_KEY',
  'temporal.tls': 'TEMPORAL_TLS_*',
  'temporal.grpcMeta': 'TEMPORAL_GRPC_META_*',
};

/** A config file's `null` and `""` clear a value, like an empty variable: both become `undefined`. */
function clearEmpty(tree: Tree): Tree {
  return Object.fromEntries(
    Object.entries(tree).map(([key, value]) => [
      key,
      value === null || value === ''
        ? undefined
        : value && typeof value === 'object' && !Array.isArray(value)
          ? clearEmpty(value as Tree)
          : value,
    ]),
  );
}

/**
 * One source's values as a tree to merge. When it names any S3 credential setting, it decides them all:
 * the ones it does not set are cleared.
 */
function layer(values: Tree, claimsCredentials: boolean): Tree {
  if (!claimsCredentials) return values;
  const s3 = (values.s3 as Tree | undefined) ?? {};
  const cleared = Object.fromEntries(CREDENTIAL_KEYS.map((key) => [key, s3[key]]));
  return { ...values, s3: { ...s3, ...cleared } };
}

function namesCredentials(tree: Tree): boolean {
  const s3 = tree.s3 as Tree | undefined;
  return !!s3 && CREDENTIAL_KEYS.some((key) => key in s3);
}

/** Bytes of a config file callpipe reads: 10,000 inline redaction terms of 200 characters fit. */
export const CONFIG_FILE_MAX_BYTES = 8 * 1024 * 1024;

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Config file path; default `CALLPIPE_CONFIG` or `./callpipe.config.json` when present. */
  file?: string;
  /** Values that win over everything (used by the local stack and tests). */
  overrides?: Tree;
}

/** Reads and validates the configuration. Throws {@link ConfigError} naming the variable at fault. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  let tree: Tree = structuredClone(DEFAULTS) as unknown as Tree;
  const origin = new Map<string, string>();

  // The tools' own files callpipe reads itself: Temporal's TOML profile (the AWS SDK reads AWS's files).
  const temporal = temporalSources(env);
  tree = mergeDeep(tree, temporal.file);
  for (const path of Object.keys(TEMPORAL_VARS))
    if (hasPath(temporal.file, path)) origin.set(path, `Temporal profile '${temporal.profile}'`);

  // The config file: beneath every variable.
  const file =
    options.file ??
    env.CALLPIPE_CONFIG ??
    (existsSync('callpipe.config.json') ? 'callpipe.config.json' : undefined);
  if (file) {
    let parsed: unknown;
    try {
      // Bounded before it is read (docs/input-limits.md): inline redaction terms fit well inside.
      const stat = statSync(resolve(file));
      if (!stat.isFile()) throw new Error('not a regular file');
      if (stat.size > CONFIG_FILE_MAX_BYTES)
        throw new Error(
          `the file is ${stat.size} bytes, more than the ${CONFIG_FILE_MAX_BYTES} callpipe reads`,
        );
      parsed = JSON.parse(readFileSync(resolve(file), 'utf8'));
    } catch (err) {
      throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new ConfigError(`config file ${file}: not a JSON object`);
    const values = clearEmpty(parsed as Tree);
    tree = mergeDeep(tree, layer(values, namesCredentials(values)));
    for (const path of Object.values(ENV_VARS)) {
      if (hasPath(values, path)) origin.set(path, `${file}: ${path}`);
    }
  }

  // The standard AWS variables: over the file, as AWS's tools rank their variables over their files.
  const aws: Tree = {};
  const ignoreEndpoints = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true';
  for (const [name, path] of [...AWS_VARS].reverse()) {
    const value = env[name];
    if (!value || (ignoreEndpoints && path === 's3.endpoint')) continue;
    setPath(aws, path, value);
    origin.set(path, name);
  }
  const awsNamesCredentials = AWS_CREDENTIAL_VARS.some((name) => env[name]);
  tree = mergeDeep(tree, layer(aws, awsNamesCredentials));
  // The TEMPORAL_* variables, likewise over the file.
  tree = mergeDeep(tree, temporal.variables);
  for (const [path, name] of Object.entries(TEMPORAL_VARS))
    if (hasPath(temporal.variables, path)) origin.set(path, name);

  // CALLPIPE_* variables: over everything but the caller's overrides; empty clears.
  const own: Tree = {};
  for (const [name, path] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (value === undefined) continue;
    setPath(own, path, value === '' ? undefined : value);
    origin.set(path, name);
  }
  tree = mergeDeep(tree, layer(own, namesCredentials(own)));
  if (options.overrides)
    tree = mergeDeep(tree, layer(options.overrides, namesCredentials(options.overrides)));

  // Path-style addressing follows the endpoint unless a source set it: S3-compatible servers want it.
  const s3 = tree.s3 as Tree;
  if (s3.forcePathStyle === undefined) s3.forcePathStyle = s3.endpoint !== undefined;

  const result = configSchema.safeParse(tree);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.join('.');
    // The source of the value, or of the nearest setting around it (`temporal.tls` for a certificate).
    const parts = issue.path.map(String);
    const around = parts.map((_, i) => parts.slice(0, parts.length - i).join('.'));
    const where = around.map((p) => origin.get(p)).find(Boolean) ?? envNameOf(path) ?? path;
    // Never echo the value: it may be a secret.
    const message = /received undefined/.test(issue.message)
      ? 'required, and it is empty or unset'
      : issue.message;
    throw new ConfigError(`invalid configuration ${where}: ${message}`);
  }
  return result.data;
}

function hasPath(tree: Tree, path: string): boolean {
  const parts = path.split('.');
  const parent = parts.length > 1 ? getPath(tree, parts.slice(0, -1).join('.')) : tree;
  return !!parent && typeof parent === 'object' && parts.at(-1)! in parent;
}

function envNameOf(path: string): string | undefined {
  return Object.entries(ENV_VARS).find(([, p]) => p === path)?.[0];
}
