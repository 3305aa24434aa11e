/** Port checks for the local stack: refuse a taken port clearly, or find free ones with `--ports auto`. */
import { createServer } from 'node:net';

function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the OS says is free now (it may be taken again before we bind it: callers health-check). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A free port whose companions (port + each offset) are free too: SeaweedFS binds gRPC at
 * HTTP port + 10000, so both must be available. Drawn from 20000 up to (not including) `below`.
 */
export async function freePortWith(offsets: number[], taken: Set<number>, below = 40000): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20000 + Math.floor(Math.random() * (below - 20000));
    const all = [base, ...offsets.map((o) => base + o)];
    if (all.some((p) => taken.has(p))) continue;
    const free = await Promise.all(all.map((p) => isPortFree(p)));
    if (free.every(Boolean)) {
      all.forEach((p) => taken.add(p));
      return base;
    }
  }
  throw new Error('no free port found after 200 attempts');
}

export class PortTakenError extends Error {
  override name = 'PortTakenError';
}

/**
 * Resolves named ports: in `fixed` mode every one must be free (else a clear error naming it and the
 * variable to change); in `auto` mode taken ones are replaced by free ones.
 */
export async function resolvePorts<K extends string>(
  wanted: Record<K, { port: number; variable: string; offsets?: number[] }>,
  mode: 'fixed' | 'auto',
): Promise<Record<K, number>> {
  const out = {} as Record<K, number>;
  const taken = new Set<number>();
  for (const [name, spec] of Object.entries(wanted) as [
    K,
    { port: number; variable: string; offsets?: number[] },
  ][]) {
    if (spec.port === 0) {
      out[name] = await freePortWith(spec.offsets ?? [], taken);
      continue;
    }
    const all = [spec.port, ...(spec.offsets ?? []).map((o) => spec.port + o)];
    const free =
      (await Promise.all(all.map((p) => isPortFree(p)))).every(Boolean) && !all.some((p) => taken.has(p));
    if (free) {
      all.forEach((p) => taken.add(p));
      out[name] = spec.port;
    } else if (mode === 'auto') {
      out[name] = await freePortWith(spec.offsets ?? [], taken);
    } else {
      const busy = all.join(', ');
      throw new PortTakenError(
        `port ${busy} for ${name} is taken: stop what uses it, set ${spec.variable}, or run with --ports auto`,
      );
    }
  }
  return out;
}
