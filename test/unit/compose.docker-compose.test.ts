/** No Docker engine runs here, so the compose file's shape is what we can check: services, env, ports. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ENV_VARS } from '../../schemas/config-variables.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { composeFile, containerEnv, dockerfileEnv, publishedPorts } from '../helpers/compose.ts';
import { TOPOLOGY } from '../../bench/lib/topology.ts';

const compose = composeFile();
const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

describe('docker-compose.yml', () => {
  const services = compose.services;

  it('has every service docs/operations.md names, each with an image or a build', () => {
    const section = operations.slice(operations.indexOf('## Production-like stack'));
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

  it('runs the topology bench:topology drills: worker processes per queue, asr replicas sharing one account budget', () => {
    const replicas = Object.fromEntries(
      ['workflows', 'media', 'asr', 'nlp'].map((q) => [q, services[`worker-${q}`]!.deploy?.replicas ?? 1]),
    );
    expect(replicas).toEqual(TOPOLOGY);
    const asr = loadConfig({ env: containerEnv(services['worker-asr']!) });
    expect(asr.limits.asrAccountSessions).toBeGreaterThan(0);
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

  it("serves every worker's metrics and readiness on all interfaces, on a published port, with a healthcheck", () => {
    const workers = Object.keys(services).filter((name) => name.startsWith('worker-'));
    const hostPorts = new Set<number>();
    let replicas = 0;
    for (const name of workers) {
      const service = services[name]!;
      // What the worker process reads from the container's environment.
      const config = loadConfig({ env: containerEnv(service) });
      expect(config.stack.metricsHost, name).toBe('0.0.0.0');
      const hosts = publishedPorts(service).get(config.stack.metricsPort);
      expect(hosts, `${name} publishes container port ${config.stack.metricsPort}`).toBeDefined();
      // One host port per replica, or the second replica of the service could not start.
      expect(hosts!.length, `${name}: host ports for its replicas`).toBe(service.deploy?.replicas ?? 1);
      hosts!.forEach((port) => hostPorts.add(port));
      replicas += hosts!.length;
      expect(service.healthcheck?.test, name).toEqual(['CMD', 'node', 'bin/http-probe.js']);
    }
    expect(hostPorts.size).toBe(replicas);
    // The image alone (docker run, Kubernetes) binds all interfaces too.
    expect(dockerfileEnv().CALLPIPE_METRICS_HOST).toBe('0.0.0.0');
    expect(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')).toMatch(
      /^HEALTHCHECK .*\["node", "bin\/http-probe\.js"\]$/m,
    );
  });
});
