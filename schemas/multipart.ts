/**
 * multipart/form-data (RFC 7578) as spec 02 uses it (file recognition; the user dictionary's upload and
 * its answers): a minimal parser, binary-safe, tolerant of parts without a Content-Type and of LF-only
 * line ends, as real clients send them; and a writer. Shared by the service client and the emulator.
 */
export interface Part {
  name: string | undefined;
  contentType: string | undefined;
  data: Buffer;
}

export function parseMultipart(body: Buffer, boundary: string): Part[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return undefined;
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // closing "--"
    // Skip to the end of the delimiter line.
    const lineEnd = body.indexOf('\n', pos);
    if (lineEnd < 0) return undefined;
    const headerStart = lineEnd + 1;
    let headerEnd = body.indexOf('\r\n\r\n', headerStart);
    let bodyStart = headerEnd + 4;
    const lf = body.indexOf('\n\n', headerStart);
    if (headerEnd < 0 || (lf >= 0 && lf < headerEnd)) {
      headerEnd = lf;
      bodyStart = lf + 2;
    }
    // A part with no header at all: the empty line follows the delimiter line at once.
    if (body[headerStart] === 0x0a || (body[headerStart] === 0x0d && body[headerStart + 1] === 0x0a)) {
      headerEnd = headerStart;
      bodyStart = headerStart + (body[headerStart] === 0x0d ? 2 : 1);
    }
    if (headerEnd < 0) return undefined;
    const next = body.indexOf(delimiter, bodyStart);
    if (next < 0) return undefined;
    let dataEnd = next;
    if (body[dataEnd - 1] === 0x0a) dataEnd--;
    if (body[dataEnd - 1] === 0x0d) dataEnd--;
    const headers = body.subarray(headerStart, headerEnd).toString('utf8').split(/\r?\n/);
    let name: string | undefined;
    let contentType: string | undefined;
    for (const line of headers) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === 'content-disposition') name = /\bname="?([^";]+)"?/i.exec(value)?.[1];
      else if (key === 'content-type') contentType = value;
    }
    parts.push({ name, contentType, data: body.subarray(bodyStart, dataEnd) });
    pos = next;
  }
  return parts;
}

/**
 * A multipart body of `parts`, and its Content-Type header (with the boundary). A part without a
 * `contentType` is its Content-Disposition line and its data only: the shape of the service's answers
 * (spec 02: a `status` part holds its three text lines), which its sample clients read as such.
 */
export function buildMultipart(
  parts: readonly { name: string; contentType?: string | undefined; data: string | Buffer }[],
  boundary = `----callpipe${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`,
): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n` +
          (p.contentType !== undefined ? `Content-Type: ${p.contentType}\r\n` : '') +
          '\r\n',
      ),
      typeof p.data === 'string' ? Buffer.from(p.data) : p.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The boundary of a `multipart/form-data; boundary=…` Content-Type. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  return /boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
}
