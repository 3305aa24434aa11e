/**
 * docker-compose.yml and the Dockerfile as data: a service's command, the environment its container gets
 * (the image's ENV, then the service's `environment` with compose's `${VAR:-default}` resolved to the
 * default) and its published ports. No Docker engine runs here; tests start what these say themselves.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  profiles?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  deploy?: { replicas?: number };
}

export function composeFile(): { services: Record<string, ComposeService> } {
  return parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
    merge: true,
  }) as { services: Record<string, ComposeService> };
}

/** `ENV` of the Dockerfile (`K=V` pairs, line continuations joined). */
export function dockerfileEnv(): Record<string, string> {
  const text = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8').replace(/\\\n\s*/g, ' ');
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^ENV\s+(.*)$/.exec(line.trim());
    if (!match) continue;
    for (const pair of match[1]!.trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

/** What a container of `service` sees: the image's ENV under the service's environment, defaults resolved. */
export function containerEnv(service: ComposeService): Record<string, string> {
  const own = Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([key, value]) => [
      key,
      String(value).replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1'),
    ]),
  );
  return { ...dockerfileEnv(), ...own };
}

/**
 * Container port → host ports, from `ports: ['host:container']` or, for a service of several replicas,
 * `['first-last:container']` (one host port per replica).
 */
export function publishedPorts(service: ComposeService): Map<number, number[]> {
  return new Map(
    (service.ports ?? []).map((p) => {
      const [host, container] = String(p).split(':');
      const [first, last = first] = host!.split('-').map(Number);
      return [Number(container), Array.from({ length: last! - first! + 1 }, (_, i) => first! + i)];
    }),
  );
}
