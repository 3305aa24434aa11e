/**
 * A TLS-terminating gRPC proxy in front of the Temporal dev server (which serves plain gRPC only), standing
 * in for Temporal Cloud or a cluster behind mTLS: it requires a client certificate signed by the test CA,
 * and, when given one, an API key (`authorization: Bearer <key>`), refusing any call without it with gRPC's
 * UNAUTHENTICATED. Each HTTP/2 stream is forwarded as is to the server over a plain HTTP/2 connection, so
 * the proxy sees, and counts, every call's headers: that the key arrived is observed, not assumed.
 */
import {
  connect,
  constants,
  createSecureServer,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Pki } from './throwaway-pki.ts';

export interface TlsProxy {
  /** `127.0.0.1:<port>`. */
  address: string;
  /** Calls forwarded, by the client certificate's common name. */
  callsByClient: Map<string, number>;
  /** Calls refused for a missing or wrong API key. */
  refused: number;
  /** Calls that carried the expected API key. */
  withApiKey: number;
  close(): Promise<void>;
}

/** A gRPC UNAUTHENTICATED answer (trailers-only), as a server refusing the API key gives. */
function refuseUnauthenticated(stream: ServerHttp2Stream): void {
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-status': String(16), // UNAUTHENTICATED
      'grpc-message': 'missing or wrong API key',
    },
    { endStream: true },
  );
}

export async function startTlsProxy(options: {
  target: string;
  pki: Pki;
  apiKey?: string;
}): Promise<TlsProxy> {
  const { pki, apiKey } = options;
  const server = createSecureServer({
    key: readFileSync(pki.serverKey),
    cert: readFileSync(pki.serverCert),
    ca: readFileSync(pki.caCert),
    requestCert: true,
    rejectUnauthorized: true,
    allowHTTP1: false,
    // Workers hold many long polls open at once on one connection.
    settings: { maxConcurrentStreams: 1000 },
  });
  const proxy: TlsProxy = {
    address: '',
    callsByClient: new Map(),
    refused: 0,
    withApiKey: 0,
    close: () =>
      new Promise((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
  const sessions = new Set<{ destroy(): void }>();

  server.on('session', (session) => {
    sessions.add(session);
    // One plain HTTP/2 connection to the server per TLS session, as a TCP proxy would have.
    const upstream: ClientHttp2Session = connect(`http://${options.target}`);
    upstream.on('error', () => session.destroy());
    session.on('close', () => {
      sessions.delete(session);
      upstream.close();
    });
    session.on('error', () => upstream.destroy());
    session.on('stream', (stream, headers) =>
      forward(stream, headers, upstream, session.socket as TLSSocket),
    );
  });

  function forward(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    upstream: ClientHttp2Session,
    socket: TLSSocket,
  ) {
    stream.on('error', () => {});
    const client = String(socket.getPeerCertificate().subject?.CN ?? '?');
    if (apiKey !== undefined) {
      if (headers.authorization !== `Bearer ${apiKey}`) {
        proxy.refused += 1;
        refuseUnauthenticated(stream);
        return;
      }
      proxy.withApiKey += 1;
    }
    proxy.callsByClient.set(client, (proxy.callsByClient.get(client) ?? 0) + 1);

    const { ':authority': _a, ':scheme': _s, ...rest } = headers;
    const request = upstream.request(rest as OutgoingHttpHeaders, { endStream: false });
    request.on('error', () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('close', () => {
      if (!request.closed) request.close(stream.rstCode || constants.NGHTTP2_CANCEL);
    });
    let trailers: OutgoingHttpHeaders = {};
    request.on('trailers', (received) => {
      trailers = received as OutgoingHttpHeaders;
    });
    request.on('response', (response, flags) => {
      if (stream.closed) return;
      // A trailers-only answer (an error status) ends the stream with its headers.
      if (flags & constants.NGHTTP2_FLAG_END_STREAM) {
        stream.respond(response as OutgoingHttpHeaders, { endStream: true });
        return;
      }
      stream.respond(response as OutgoingHttpHeaders, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      request.pipe(stream);
    });
    stream.pipe(request);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  proxy.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
