/**
 * The environment a child process gets: built from an allow-list, never the parent's whole environment.
 * A worker's or a command's environment holds the service's client secret and S3 keys, and a child
 * (ffmpeg reading a user's recording, a server of the local stack, a browser) must not hold them: what a
 * process holds, a crash dump, `/proc/<pid>/environ` or a plugin of that program can show. Every place
 * callpipe starts a process builds its environment here; a process that needs a secret (the stack's
 * workers) is given exactly those variables by name, as `extra`.
 */

/** What any program needs to run as the user would: where programs and libraries are, locale, time zone, temp files, home. */
const BASE_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LANGUAGE',
  'TZ',
  'LD_LIBRARY_PATH',
  // Windows: programs fail to start without them.
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
];
const BASE_PREFIXES = ['LC_'];

/**
 * Variables that hold secrets, wherever they come from: never copied to a child by a prefix or a group
 * below, only when named in `extra`. CALLPIPE_* secrets are the configuration's (schemas/config.ts).
 */
export const SECRET_VARIABLES = [
  'CALLPIPE_CLIENT_SECRET',
  'CALLPIPE_S3_SECRET_ACCESS_KEY',
  'CALLPIPE_S3_SESSION_TOKEN',
  // Keys that encrypt workflow payloads (workers/payload-codec.ts).
  'CALLPIPE_PAYLOAD_KEYS',
  // The key of personal values' digests (schemas/personal-digest.ts).
  'CALLPIPE_DIGEST_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'TEMPORAL_API_KEY',
] as const;

/** Groups of variables a kind of child needs beyond the base, each named by what it is for. */
const CHILD_VARIABLE_GROUPS = {
  /** A Node program of ours: its options, trusted CAs and proxies (the service may sit behind one). */
  node: {
    names: [
      'NODE_OPTIONS',
      'NODE_EXTRA_CA_CERTS',
      'NODE_USE_ENV_PROXY',
      'SSL_CERT_FILE',
      'SSL_CERT_DIR',
      'HTTP_PROXY',
      'HTTPS_PROXY',
      'NO_PROXY',
      'http_proxy',
      'https_proxy',
      'no_proxy',
    ],
    prefixes: [],
  },
  /** callpipe's own settings (CALLPIPE_*), secrets excepted. */
  callpipe: { names: [], prefixes: ['CALLPIPE_'] },
  /** A package manager or build tool that fetches and builds the pinned tools (pip, apt-get, Go). */
  installer: {
    names: [
      'DEBIAN_FRONTEND',
      'GOPATH',
      'GOROOT',
      'GOCACHE',
      'GOMODCACHE',
      'GOENV',
      'GOPROXY',
      'GONOPROXY',
      'GOPRIVATE',
      'GONOSUMDB',
      'GOSUMDB',
      'GOINSECURE',
      'GOFLAGS',
      'GOTOOLCHAIN',
    ],
    prefixes: ['PIP_'],
  },
  /** A desktop program (the browser `callpipe open` starts). */
  desktop: {
    names: [
      'DISPLAY',
      'WAYLAND_DISPLAY',
      'XAUTHORITY',
      'DBUS_SESSION_BUS_ADDRESS',
      'BROWSER',
      // xdg-open tells the desktop by these.
      'DESKTOP_SESSION',
      'KDE_FULL_SESSION',
      'KDE_SESSION_VERSION',
      'GNOME_DESKTOP_SESSION_ID',
    ],
    prefixes: ['XDG_'],
  },
} as const;

type ChildVariableGroup = keyof typeof CHILD_VARIABLE_GROUPS;

export interface ChildEnvOptions {
  /** Groups beyond the base (default none: a tool such as ffmpeg needs only the base). */
  groups?: ChildVariableGroup[];
  /** Variables set as given (a secret the child needs, the tools' paths); `undefined` leaves one unset. */
  extra?: Record<string, string | undefined>;
  /** The environment to copy from; default this process's. */
  parent?: NodeJS.ProcessEnv;
}

const SECRETS: ReadonlySet<string> = new Set(SECRET_VARIABLES);

/** The environment of a child: the base variables and `groups` of `parent`, then `extra`. */
export function childEnv(options: ChildEnvOptions = {}): Record<string, string> {
  const { groups = [], extra = {}, parent = process.env } = options;
  const names = new Set<string>(BASE_VARIABLES);
  const prefixes: string[] = [...BASE_PREFIXES];
  for (const group of groups) {
    for (const name of CHILD_VARIABLE_GROUPS[group].names) names.add(name);
    prefixes.push(...CHILD_VARIABLE_GROUPS[group].prefixes);
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || SECRETS.has(name)) continue;
    const upper = name.toUpperCase();
    if (names.has(name) || names.has(upper) || prefixes.some((p) => name.startsWith(p))) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
