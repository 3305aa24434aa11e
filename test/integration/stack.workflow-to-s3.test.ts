import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { objectStore, stackConfig, temporalClient } from '../helpers/stack.ts';
import { taskQueues } from '../../schemas/config.ts';

describe('the local stack', () => {
  it('runs a real workflow whose activity writes to and reads back from the real S3 server', async () => {
    const config = stackConfig();
    const { client, close } = await temporalClient(config);
    try {
      const key = `test/stack-check/${randomUUID()}.txt`;
      const text = `hello from a workflow ${randomUUID()} — 日本語も`;
      const result = await client.workflow.execute('stackCheck', {
        taskQueue: taskQueues(config).workflows,
        workflowId: `stack-check-${randomUUID()}`,
        args: [{ key, text }],
      });
      expect(result).toEqual({ key, text, bytes: Buffer.byteLength(text) });
      // Read it independently of the workflow: the object really is in S3.
      expect(await objectStore(config).getText(key)).toBe(text);
    } finally {
      await close();
    }
  });

  it('registers the custom search attributes on the dev server', async () => {
    const { client, close } = await temporalClient();
    try {
      const res = await client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(res.customAttributes)).toEqual(
        expect.arrayContaining(['CallpipeCallId', 'CallpipeBatchId', 'CallpipeStage', 'CallpipeOutcome']),
      );
    } finally {
      await close();
    }
  });
});
