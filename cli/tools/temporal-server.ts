/**
 * The production topology's Temporal: the Temporal server, its SQL schema tool and, when it
 * builds, its Web UI server, built from their Go modules at pinned versions into the git-ignored
 * `.tools/temporal-server/<version>/` and `.tools/temporal-ui-server/<version>/`, once; PostgreSQL from
 * Debian's `postgresql` package. Modules come from the Go module proxy, nothing else downloads.
 *
 * Not part of `ensureTools()`: the dev server (`temporal server start-dev`) is what `callpipe up` and the
 * tests run; only the production-topology drill (`npm run bench:topology`) needs these, and building the
 * server takes 10–20 minutes on 2 cores the first time.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ensureDebianTool, TOOLS_DIR, ToolsError } from './provision.ts';
import { processSettings } from '../../schemas/process-settings.ts';
import { childEnv } from '../../schemas/child-env.ts';

/**
 * Pinned Go modules. Server v1.32.1 is the newest of the v1.32 line that Go 1.26.8 builds (v1.32.2 asks
 * for Go 1.26.10); UI server v2.55.0 likewise (v2.56 asks for 1.26.9). Any 1.2x+ server serves the TS SDK
 * 1.24 we pin.
 */
export const PINNED_TEMPORAL_SERVER = {
  server: { module: 'go.temporal.io/server', version: 'v1.32.1' },
  ui: { module: 'github.com/temporalio/ui-server/v2', version: 'v2.55.0' },
} as const;

export interface TemporalServerTools {
  /** `go.temporal.io/server/cmd/server` */
  server: string;
  /** `go.temporal.io/server/cmd/tools/sql` (temporal-sql-tool) */
  sqlTool: string;
  /** The module's PostgreSQL schema (`schema/postgresql/v12`), copied beside the binaries. */
  postgresSchema: string;
  /** `github.com/temporalio/ui-server/v2/cmd/server`, when it built. */
  uiServer?: string;
  /** Debian's PostgreSQL binaries (initdb, postgres, pg_isready). */
  postgresBin: string;
}

const serverDir = () => join(TOOLS_DIR, 'temporal-server', PINNED_TEMPORAL_SERVER.server.version);
const uiDir = () => join(TOOLS_DIR, 'temporal-ui-server', PINNED_TEMPORAL_SERVER.ui.version);

function findGo(): string | undefined {
  const configured = processSettings().go;
  if (configured) return configured;
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/local/go/bin']) {
    if (dir && existsSync(join(dir, 'go'))) return join(dir, 'go');
  }
  return undefined;
}

/** Debian's PostgreSQL (any major version it ships; 15 on bookworm): the directory of its binaries. */
function ensurePostgresql(log: (line: string) => void): string {
  const find = () => {
    const root = '/usr/lib/postgresql';
    if (!existsSync(root)) return undefined;
    const majors = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    return majors[0] ? join(root, majors[0], 'bin') : undefined;
  };
  return ensureDebianTool(
    {
      name: 'PostgreSQL',
      debianPackages: ['postgresql'],
      find,
      why: "the production topology's Temporal server keeps its state in it",
    },
    log,
  );
}

/**
 * `go install <module>/<pkg>@<version>` into `bin`, gently (one compile at a time, lowest priority: the
 * machine stays usable while it builds). Throws with the build's last lines when it fails.
 */
function goInstall(go: string, bin: string, packages: string[], log: (line: string) => void): void {
  mkdirSync(bin, { recursive: true });
  log(`building ${packages.join(' ')} with Go into ${bin} (once; 10–20 minutes on 2 cores)…`);
  const nice = existsSync('/usr/bin/nice') ? ['/usr/bin/nice', '-n', '19'] : [];
  const [cmd, ...args] = [...nice, go, 'install', ...packages];
  const res = spawnSync(cmd!, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({
      groups: ['node', 'installer'],
      extra: { GOBIN: bin, GOFLAGS: '-p=1', GOMAXPROCS: '1', GOTOOLCHAIN: 'local' },
    }),
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error || res.status !== 0) {
    const tail = `${res.stderr ?? ''}${res.stdout ?? ''}`.trim().split('\n').slice(-8).join('\n');
    throw new ToolsError(
      `go install ${packages.join(' ')} failed${res.error ? `: ${res.error.message}` : ''}\n${tail}`,
    );
  }
}

function goModDir(go: string, module: string, version: string): string {
  const res = spawnSync(go, ['mod', 'download', '-json', `${module}@${version}`], {
    encoding: 'utf8',
    env: childEnv({ groups: ['node', 'installer'], extra: { GOFLAGS: '', GOTOOLCHAIN: 'local' } }),
    cwd: TOOLS_DIR,
  });
  const dir = res.status === 0 ? (JSON.parse(res.stdout) as { Dir?: string }).Dir : undefined;
  if (!dir) throw new ToolsError(`go mod download ${module}@${version} failed: ${res.stderr}`);
  return dir;
}

/**
 * The pinned Temporal server, schema tool and (if it builds) UI server, built when missing; PostgreSQL
 * from Debian. Fast when everything is there: a few `stat`s.
 */
export function ensureTemporalServer(
  options: { log?: (line: string) => void; ui?: boolean } = {},
): TemporalServerTools {
  const log = options.log ?? (() => {});
  const postgresBin = ensurePostgresql(log);
  const { server, ui } = PINNED_TEMPORAL_SERVER;
  const dir = serverDir();
  const paths = {
    server: join(dir, 'server'),
    sqlTool: join(dir, 'sql'),
    postgresSchema: join(dir, 'schema', 'postgresql', 'v12'),
  };
  const go = () => {
    const found = findGo();
    if (!found)
      throw new ToolsError(
        'Go is missing: the production topology builds the Temporal server from its Go module. Install Go ' +
          '1.26.8 or later (/usr/local/go/bin/go), or point CALLPIPE_GO at it.',
      );
    return found;
  };
  if (!existsSync(paths.server) || !existsSync(paths.sqlTool)) {
    goInstall(
      go(),
      dir,
      [`${server.module}/cmd/server@${server.version}`, `${server.module}/cmd/tools/sql@${server.version}`],
      log,
    );
  }
  if (!existsSync(paths.postgresSchema)) {
    // The schema ships in the module, not in the binaries: copied beside them, so .tools/ is self-contained.
    const moduleDir = goModDir(go(), server.module, server.version);
    cpSync(join(moduleDir, 'schema', 'postgresql', 'v12'), paths.postgresSchema, { recursive: true });
  }
  let uiServer: string | undefined;
  if (options.ui !== false) {
    const bin = join(uiDir(), 'server');
    const failed = join(uiDir(), 'build-failed.txt');
    if (existsSync(bin)) uiServer = bin;
    else if (existsSync(failed))
      log(`Temporal UI server ${ui.version} did not build here before (${failed}): left out`);
    else {
      try {
        goInstall(go(), uiDir(), [`${ui.module}/cmd/server@${ui.version}`], log);
        uiServer = bin;
      } catch (err) {
        // The topology runs without a Web UI; the reason stays on disk, so it is not rebuilt every run.
        mkdirSync(uiDir(), { recursive: true });
        writeFileSync(failed, (err as Error).message);
        rmSync(bin, { force: true });
        log(
          `Temporal UI server ${ui.version} did not build: left out (${(err as Error).message.split('\n')[0]})`,
        );
      }
    }
  }
  return { ...paths, postgresBin, ...(uiServer ? { uiServer } : {}) };
}
