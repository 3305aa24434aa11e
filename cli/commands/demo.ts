/**
 * `callpipe demo`: starts the local stack (or uses the one `callpipe up` is running), runs the main job
 * and prints what it did. Until the recording pipeline lands, the main job is the stack check: a real
 * workflow whose activity writes an object to the real S3 server and reads it back.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { parseCommandArgs } from '../command.ts';
import { loadConfig, taskQueues } from '../../schemas/config.ts';
import { readStackFile, startStack, type RunningStack } from '../stack/stack.ts';

export const summary = 'starts the local stack, runs the main job on it and prints where the results are';
export const help = `Usage: callpipe demo [--keep]

Starts the local stack under $CALLPIPE_HOME (default .callpipe/) unless \`callpipe up\` is already running
there, runs the demo job and prints what it did. --keep leaves the stack running afterwards.`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('demo', argv, { keep: { type: 'boolean', default: false } }, false);
  const base = loadConfig();
  const existing = readStackFile(base.stack.home);
  let stack: RunningStack | undefined;
  let config = base;
  let webUi: string;
  if (existing) {
    console.log(`using the stack already running from ${existing.addresses.home}`);
    config = loadConfig({ env: { ...process.env, ...existing.env } });
    webUi = existing.addresses.webUiUrl;
  } else {
    console.log('starting the local stack…');
    stack = await startStack({ config: base, log: (line) => console.log(`  ${line}`) });
    config = stack.config;
    webUi = stack.addresses.webUiUrl;
  }
  try {
    const connection = await Connection.connect({ address: config.temporal.address });
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const workflowId = `demo-stack-check-${randomUUID().slice(0, 8)}`;
    const key = `demo/${workflowId}.txt`;
    const text = `callpipe demo at ${new Date().toISOString()}`;
    const result = await client.workflow.execute('stackCheck', {
      taskQueue: taskQueues(config).workflows,
      workflowId,
      args: [{ key, text }],
    });
    await connection.close();
    console.log(
      [
        '',
        `workflow ${workflowId} completed: wrote s3://${config.s3.bucket}/${result.key} (${result.bytes} bytes) and read back:`,
        `  "${result.text}"`,
        `Web UI: ${webUi}/namespaces/${config.temporal.namespace}/workflows/${workflowId}`,
      ].join('\n'),
    );
  } finally {
    if (stack && !values.keep) await stack.stop();
  }
  return 0;
}
