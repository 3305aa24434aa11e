/**
 * The body of a file recognition request as the emulator reads it, written from spec 02 (Recognition
 * from file: `multipart/form-data; boundary=<BOUNDARY>`, exactly three parts in order, each with its
 * name and Content-Type) and the form it follows (RFC 7578 on RFC 2046: a part is introduced by
 * `--BOUNDARY` and CRLF, its header lines end at an empty line, its content ends at CRLF before the next
 * delimiter; the last delimiter is `--BOUNDARY--`).
 *
 * Deliberately not the client's code (schemas/multipart.ts): a misreading shared by the client and the
 * emulator would pass every test. This reader is stricter than that one where the spec is: CRLF line
 * ends only, a Content-Disposition `form-data` with a quoted or token `name` on every part, and no
 * content after a part's end but the next delimiter.
 */
import { mediaType, mediaTypeParam } from './http.ts';

export interface FormPart {
  name: string;
  /** The part's Content-Type header, lower-cased media type and parameters as sent. */
  contentType: string | undefined;
  content: Buffer;
}

/** Why a body is not the form the spec describes: the emulator answers it as an invalid request. */
export class FormError extends Error {}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The `boundary` parameter of a multipart/form-data Content-Type (RFC 2046: 1 to 70 characters). */
export function formBoundary(contentType: string | undefined): string | undefined {
  if (mediaType(contentType) !== 'multipart/form-data') return undefined;
  const boundary = mediaTypeParam(contentType, 'boundary');
  return boundary && boundary.length <= 70 ? boundary : undefined;
}

/** `name` of a `Content-Disposition: form-data; name="…"` header value. */
function dispositionName(value: string): string | undefined {
  const [kind, ...params] = value.split(';');
  if (kind!.trim().toLowerCase() !== 'form-data') return undefined;
  for (const param of params) {
    const m = /^\s*name\s*=\s*(?:"([^"]*)"|([^\s;"]+))\s*$/i.exec(param);
    if (m) return m[1] ?? m[2];
  }
  return undefined;
}

function readHeaders(block: string): { name: string; contentType: string | undefined } {
  let name: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FormError(`a part's header line has no name: ${JSON.stringify(line)}`);
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'content-disposition') name = dispositionName(value);
    else if (field === 'content-type') contentType = value;
  }
  if (name === undefined) throw new FormError('a part has no Content-Disposition form-data name');
  return { name, contentType };
}

/** The parts of a multipart/form-data body, in order; a FormError when it is not well formed. */
export function readForm(body: Buffer, boundary: string): FormPart[] {
  const open = Buffer.from(`--${boundary}`);
  // The first delimiter starts the body (a preamble is allowed by RFC 2046 and skipped).
  let at = body.indexOf(open);
  if (at < 0) throw new FormError('no delimiter of the boundary in the body');
  const parts: FormPart[] = [];
  const between = Buffer.from(`\r\n--${boundary}`);
  for (;;) {
    at += open.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // `--BOUNDARY--`: the end
    if (!body.subarray(at, at + 2).equals(CRLF)) throw new FormError('a delimiter line does not end in CRLF');
    const headersFrom = at + 2;
    const headersTo = body.indexOf(HEADER_END, headersFrom);
    if (headersTo < 0) throw new FormError("a part's headers do not end with an empty line");
    const headers = readHeaders(body.subarray(headersFrom, headersTo).toString('utf8'));
    const contentFrom = headersTo + HEADER_END.length;
    const next = body.indexOf(between, contentFrom);
    if (next < 0) throw new FormError('a part is not closed by a delimiter');
    parts.push({ ...headers, content: body.subarray(contentFrom, next) });
    at = next + 2; // at the `--BOUNDARY` of the next delimiter
  }
}
