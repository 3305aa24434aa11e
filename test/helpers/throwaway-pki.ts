/**
 * A throwaway certificate authority for TLS tests, made with Debian's `openssl` at test time: the CA, a
 * server certificate for `serverName` (and 127.0.0.1), and a client certificate for mutual TLS. EC P-256
 * keys in PKCS#8, X.509 v3 with the extensions rustls (Temporal's core) and Node both insist on.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureOpenssl } from '../../cli/tools/provision.ts';

export interface Pki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  serverName: string;
}

export function makePki(dir: string, serverName: string): Pki {
  const openssl = ensureOpenssl();
  mkdirSync(dir, { recursive: true });
  const path = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync(openssl, args, { cwd: dir, stdio: 'pipe' });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  run(
    'req',
    '-x509',
    ...newKey,
    ...['-keyout', path('ca.key'), '-out', path('ca.crt'), '-days', '2', '-subj', '/CN=callpipe test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );
  const leaf = (name: string, serial: number, cn: string, extensions: string) => {
    writeFileSync(path(`${name}.ext`), extensions);
    run('req', ...newKey, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', `/CN=${cn}`);
    run(
      'x509',
      '-req',
      ...[
        '-in',
        path(`${name}.csr`),
        '-CA',
        path('ca.crt'),
        '-CAkey',
        path('ca.key'),
        '-set_serial',
        String(serial),
      ],
      ...['-out', path(`${name}.crt`), '-days', '2', '-extfile', path(`${name}.ext`)],
    );
  };
  const common = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n';
  leaf(
    'server',
    2,
    serverName,
    `${common}extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${serverName},IP:127.0.0.1\n`,
  );
  leaf('client', 3, 'callpipe-worker', `${common}extendedKeyUsage=clientAuth\n`);
  return {
    caCert: path('ca.crt'),
    serverCert: path('server.crt'),
    serverKey: path('server.key'),
    clientCert: path('client.crt'),
    clientKey: path('client.key'),
    serverName,
  };
}
