/**
 * `callpipe up` points its Web UI at the codec server it starts (cli/stack/stack.ts): the dev server gets
 * the endpoint (token in its path, as the UI cannot add a header); a stack without a UI gets none.
 */
import { describe, expect, it } from 'vitest';
import { devServerProcess } from '../../cli/stack/stack.ts';
import { loadConfig } from '../../schemas/config-loader.ts';

describe('the local stack and its codec server', () => {
  const config = loadConfig({ env: {} });
  const tools = { temporal: '/usr/bin/temporal' };
  const endpoint = 'http://127.0.0.1:23456/token-of-the-stack';

  it("gives the dev server's Web UI the codec endpoint", () => {
    const server = devServerProcess(
      config,
      { temporal: 7233, temporalUi: 8233 },
      '/tmp/h',
      tools,
      {},
      endpoint,
    );
    const args = server.options.args ?? [];
    expect(args[args.indexOf('--ui-codec-endpoint') + 1]).toBe(endpoint);
    expect(args).toContain('--ui-port');
  });

  it('gives none without a codec server or without a Web UI', () => {
    const noCodec = devServerProcess(config, { temporal: 7233, temporalUi: 8233 }, '/tmp/h', tools, {});
    expect(noCodec.options.args).not.toContain('--ui-codec-endpoint');
    const headless = devServerProcess(config, { temporal: 7233 }, '/tmp/h', tools, {}, endpoint);
    expect(headless.options.args).not.toContain('--ui-codec-endpoint');
    expect(headless.options.args).toContain('--headless');
  });
});
