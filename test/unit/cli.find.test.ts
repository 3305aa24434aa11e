/**
 * `callpipe find`'s refusals: without a digest key it says that nothing can be looked up (and that none
 * was written), one question at a time, and no refusal echoes the value it was given.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../cli/commands/find.ts';
import { CliError } from '../../cli/command.ts';

describe('callpipe find: refusals', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'find-cli-'));
    vi.stubEnv('CALLPIPE_HOME', home);
    vi.stubEnv('CALLPIPE_DIGEST_KEY', '');
    vi.stubEnv('CALLPIPE_DIGEST_KEY_FILE', '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(home, { recursive: true, force: true });
  });

  async function refusal(args: string[]): Promise<CliError> {
    const err = await run(args).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    return err as CliError;
  }

  it('without a digest key, says no value can be looked up, without the value', async () => {
    const err = await refusal(['--phone', '090-1234-5678', '--offline']);
    expect(err.message).toMatch(
      /no digest key is configured \(CALLPIPE_DIGEST_KEY or CALLPIPE_DIGEST_KEY_FILE\)/,
    );
    expect(err.exitCode).toBe(1);
    expect(err.message).not.toMatch(/1234|5678/);
  });

  it('a key too short is refused by its variable, not its material', async () => {
    vi.stubEnv('CALLPIPE_DIGEST_KEY', 'short-key');
    const err = await refusal(['--email', 'hanako@example.jp', '--offline']);
    expect(err.message).toMatch(/CALLPIPE_DIGEST_KEY: the digest key is shorter than 16 bytes/);
    expect(err.message).not.toMatch(/short-key|hanako/);
  });

  it('asks one question at a time; a number without digits is refused without echoing it', async () => {
    expect((await refusal(['--phone', '1', '--customer', 'C-9'])).message).toMatch(/expected one of --phone/);
    expect((await refusal([])).message).toMatch(/expected one of --phone/);
    const err = await refusal(['--phone', 'ichi-ni-san']);
    expect(err.message).toMatch(/--phone is empty once normalized \(no digits\)/);
    expect(err.message).not.toMatch(/ichi/);
  });
});
