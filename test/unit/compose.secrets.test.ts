/**
 * The compose stack encrypts like the local one: every worker reads the deployment's payload keys and
 * digest key from files Docker mounts as secrets (never from the image or the compose file), and the Web
 * UI has a codec server beside it holding the same payload keys.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadConfig } from '../../schemas/config-loader.ts';
import { composeFile, containerEnv } from '../helpers/compose.ts';

const raw = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
}) as {
  services: Record<string, { secrets?: string[]; command?: string[]; environment?: Record<string, string> }>;
  secrets?: Record<string, { file?: string }>;
};
const { services } = composeFile();

describe('docker-compose.yml: keys of the deployment', () => {
  it('gives every worker the payload keys and the digest key as mounted secret files', () => {
    const workers = Object.keys(services).filter((name) => name.startsWith('worker-'));
    expect(workers.length).toBe(4);
    for (const name of workers) {
      const config = loadConfig({ env: containerEnv(services[name]!) });
      expect(config.temporal.payloadKeysFile, name).toBe('/run/secrets/callpipe-payload-keys');
      expect(config.redaction.digestKeyFile, name).toBe('/run/secrets/callpipe-digest-key');
      expect(config.temporal.payloadKeys, name).toBeUndefined();
      expect(config.redaction.digestKey, name).toBeUndefined();
      expect(raw.services[name]!.secrets, name).toEqual(['callpipe-payload-keys', 'callpipe-digest-key']);
    }
    for (const secret of ['callpipe-payload-keys', 'callpipe-digest-key', 'callpipe-codec-token'])
      expect(raw.secrets?.[secret]?.file, secret).toMatch(/^\.\/secrets\//);
  });

  it('runs a codec server with the same payload keys, on the host loopback, for the Web UI', () => {
    const codec = raw.services['codec-server']!;
    expect(codec.command?.slice(0, 3)).toEqual(['node', 'bin/callpipe.js', 'codec-server']);
    expect(codec.command).toContain('/run/secrets/callpipe-codec-token');
    expect(codec.environment?.CALLPIPE_PAYLOAD_KEYS_FILE).toBe('/run/secrets/callpipe-payload-keys');
    expect(services['codec-server']!.ports).toEqual(['127.0.0.1:8888:8888']);
    expect(Object.keys(services['temporal-ui']!.environment ?? {})).toContain('TEMPORAL_CODEC_ENDPOINT');
  });
});
