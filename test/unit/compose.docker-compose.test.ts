/** No Docker engine runs here, so the compose file's shape is what we can check: services, env, ports. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ENV_VARS } from '../../schemas/config.ts';

interface Service {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  ports?: string[];
  profiles?: string[];
}

const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
}) as { services: Record<string, Service> };
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('docker-compose.yml', () => {
  const services = compose.services;

  it('has every service the README names, each with an image or a build', () => {
    const section = readme.slice(readme.indexOf('## Production-like stack'));
    const named = [...section.matchAll(/^\| `([a-z0-9-]+)`\s*\|/gm)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThanOrEqual(9);
    for (const name of named) {
      expect(services[name], `service ${name}`).toBeDefined();
      expect(services[name]!.image ?? services[name]!.build, `${name} image or build`).toBeTruthy();
    }
    for (const queue of ['workflows', 'media', 'asr', 'nlp'])
      expect(services[`worker-${queue}`]).toBeDefined();
    expect(services.emulator?.profiles).toEqual(['emulator']);
  });

  it('only uses environment keys that the config schema knows', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const key of Object.keys(service.environment ?? {})) {
        if (!key.startsWith('CALLPIPE_')) continue;
        expect(Object.keys(ENV_VARS), `${name}: ${key}`).toContain(key);
      }
    }
  });

  it('publishes no host port twice', () => {
    const hostPorts = Object.values(services).flatMap((s) =>
      (s.ports ?? []).map((p) => String(p).split(':')[0]),
    );
    expect(hostPorts.length).toBeGreaterThan(0);
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });
});
