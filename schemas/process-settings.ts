/**
 * One process's own variables, apart from the configuration (schemas/config.ts): where its external
 * tools are, debugging, the local stack's hand-over to its children, the emulator command's settings and
 * a worker's Deployment Version.
 */
/**
 * Variables of one process rather than of a deployment: where its external tools are, debugging, the
 * local stack's hand-over to its children, and the emulator command's own settings. Read here by
 * {@link processSettings}, apart from `loadConfig`: a worker must find ffmpeg, and `callpipe emulator`
 * its settings, whatever else the environment holds. An empty variable is unset. None is a secret.
 */
export const PROCESS_ENV_VARS = {
  /** ffmpeg and ffprobe binaries (see {@link mediaTools}). */
  ffmpeg: 'CALLPIPE_FFMPEG',
  ffprobe: 'CALLPIPE_FFPROBE',
  /** Chromium for the browser tests (cli/tools/provision.ts looks for Debian's otherwise). */
  chromium: 'CALLPIPE_CHROMIUM',
  /** A sox that writes AMR-NB, for the AMR fixtures (else the one on PATH). */
  sox: 'CALLPIPE_SOX',
  /**
   * The speakers stage's voice separator (schemas/speaker-model.ts): `auto`, the speaker-embedding model
   * when `callpipe tools` installed it; unset or `off`, the voice-feature method; a directory, the model there.
   */
  speakerModel: 'CALLPIPE_SPEAKER_MODEL',
  /** The Go toolchain that builds the pinned Temporal server (else the one on PATH or in /usr/local/go). */
  go: 'CALLPIPE_GO',
  /** Any value: the command prints an error's stack under its one line. */
  debug: 'CALLPIPE_DEBUG',
  /** A prebuilt workflow bundle for the workers (tests, production images); unset: bundled from source. */
  workflowBundle: 'CALLPIPE_WORKFLOW_BUNDLE',
  /** Set by the stack on its children: `stdin` means "stop when stdin closes" (workers/parent-watch.ts). */
  stopWithParent: 'CALLPIPE_STOP_WITH_PARENT',
  /** `callpipe emulator`: its time scale, as the stack's (`stack.emulatorSpeed`). */
  emulatorSpeed: 'CALLPIPE_EMULATOR_SPEED',
  /** `callpipe emulator`: a file request's processing time × its audio seconds, as the stack's. */
  emulatorFileRtf: 'CALLPIPE_EMULATOR_FILE_RTF',
  /** `callpipe emulator`: the fastest pace it accepts, × real time. */
  emulatorCeiling: 'CALLPIPE_EMULATOR_CEILING',
  /** `callpipe emulator`: slack on the spec's deadlines between requests, ms. */
  emulatorDeadlineSlackMs: 'CALLPIPE_EMULATOR_DEADLINE_SLACK_MS',
  /** `callpipe emulator`: its phrasebook and fault file, as the stack's. */
  emulatorPhrasebook: 'CALLPIPE_EMULATOR_PHRASEBOOK',
  emulatorFaults: 'CALLPIPE_EMULATOR_FAULTS',
  /** The build id a worker's Deployment Version carries (workers/versioning.ts); unset: version + commit. */
  buildId: 'CALLPIPE_BUILD_ID',
  /** The Worker Deployment a worker joins; unset: named by the task-queue prefix. */
  deploymentName: 'CALLPIPE_DEPLOYMENT_NAME',
} as const;

export type ProcessSettings = { -readonly [K in keyof typeof PROCESS_ENV_VARS]?: string };

/** The variables of {@link PROCESS_ENV_VARS} that are set (not empty), by their names there. */
export function processSettings(env: NodeJS.ProcessEnv = process.env): ProcessSettings {
  const settings: ProcessSettings = {};
  for (const [key, name] of Object.entries(PROCESS_ENV_VARS) as [keyof ProcessSettings, string][]) {
    const value = env[name];
    if (value) settings[key] = value;
  }
  return settings;
}

/**
 * The stack's home as a worker process sees it (`CALLPIPE_HOME`, which the stack hands its children), or
 * undefined when unset: where a worker keeps its private local folders and looks for a full disk.
 */
export function stackHomeOf(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.CALLPIPE_HOME || undefined;
}

/**
 * The ffmpeg and ffprobe a process runs: the variables when set, else the builds the tools module
 * provides (`provided`: the local stack, tests), else the ones on PATH. The stack hands its choice to its
 * children in the same variables.
 */
export function mediaTools(
  env: NodeJS.ProcessEnv = process.env,
  provided?: { ffmpeg: string; ffprobe: string },
): { ffmpeg: string; ffprobe: string } {
  const { ffmpeg, ffprobe } = processSettings(env);
  return {
    ffmpeg: ffmpeg ?? provided?.ffmpeg ?? 'ffmpeg',
    ffprobe: ffprobe ?? provided?.ffprobe ?? 'ffprobe',
  };
}
