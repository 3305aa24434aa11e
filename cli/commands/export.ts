/**
 * `callpipe export`: everything callpipe holds about some calls, for a customer's disclosure request
 * (activities/lifecycle/export-calls.ts does the work). The calls are named by id, or found as `find`
 * finds them (a phone number, an e-mail address, a customer id, by keyed digest); the value asked is
 * never printed.
 */
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { callsAsked, CALLS_ASKED_OPTIONS } from '../calls-asked.ts';
import { createObjectStore } from '../../activities/storage/object-store.ts';
import {
  exportCalls,
  ExportRequestError,
  type ExportTarget,
} from '../../activities/lifecycle/export-calls.ts';
import { KeyError, normalizePrefix, parseS3Url } from '../../schemas/call-keys.ts';
import { maskedValue } from '../../schemas/personal-digest.ts';

export const summary = 'exports everything held about calls, for a disclosure request';
export const help = `Usage: callpipe export <callId>… --to <folder | s3://bucket/prefix> [--recordings] [--unredacted]
       callpipe export --phone N | --email A | --customer ID --to … [options]

Copies what callpipe holds about the calls, for a customer's request to see their data (APPI Art. 33;
docs/requests-from-customers.md): each call's result.json, transcript.vtt, call.html, error.json and
redacted audio, and its rows of every analysis table as JSON (<callId>/tables/<table>.json), with a
manifest.json naming where each file came from, its size and SHA-256. An audit record (request id, time,
call ids and counts; never a value) is kept under audit/export/ in the output bucket.

The target must be a new or empty folder, or an empty S3 prefix. A call id that is unknown refuses the
whole request and nothing is written; a folder appears whole at the end, an S3 export is whole once its
manifest.json is there (written last; what was uploaded is removed again if anything fails).

  --to <folder | s3://…>  where the export goes (required)
  --recordings            the recordings as recorded too (<callId>/recording/<file name>)
  --unredacted            the unredacted copies too (<callId>/unredacted/), when configured
                          (CALLPIPE_UNREDACTED_PREFIX)
  --phone <N>, --email <A>, --customer <ID>
                          the calls that hold this value, found as callpipe find finds them
  --out <s3://bucket/prefix>   where the calls' results are (default: CALLPIPE_S3_OUTPUT_PREFIX)
  --offline               with --phone/--email/--customer: the tables' local mirror as it is
  --json                  print the manifest (JSON) instead of a summary

Staging (a run's intermediates) and the tables' bookkeeping are not exported; the manifest says how
many such objects a call has. Exit code 0 once the export is whole, 1 when it could not be made, 2 for a
request that cannot be served (nothing is written).`;

function targetOf(to: string | undefined): ExportTarget {
  if (!to) throw new CliError('export: --to <folder | s3://bucket/prefix> is required');
  const s3 = parseS3Url(to);
  if (s3) {
    try {
      return { kind: 's3', bucket: s3.bucket, prefix: normalizePrefix(s3.key) };
    } catch (err) {
      throw new CliError(`export: --to ${(err as KeyError).message}`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to))
    throw new CliError(`export: --to must be a folder or s3://bucket/prefix, got '${to}'`);
  return { kind: 'dir', path: to };
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('export', argv, {
    to: { type: 'string' },
    recordings: { type: 'boolean', default: false },
    unredacted: { type: 'boolean', default: false },
    ...CALLS_ASKED_OPTIONS,
    json: { type: 'boolean', default: false },
  });
  const target = targetOf(values.to);
  const { config } = pipelineConfig();
  const { places, callIds, asked } = await callsAsked('export', config, values, positionals);
  if (values.unredacted && !places.unredacted)
    throw new CliError(
      'export: --unredacted, but no unredacted copies are configured (CALLPIPE_UNREDACTED_PREFIX)',
    );
  if (asked && callIds.length === 0)
    throw new CliError(
      `export: no call holds ${maskedValue(asked.kind, asked.value)}; nothing was exported`,
      1,
    );
  const store = createObjectStore(config.s3);
  let done;
  try {
    done = await exportCalls(store, places, callIds, target, {
      recordings: values.recordings,
      unredacted: values.unredacted,
    });
  } catch (err) {
    if (err instanceof ExportRequestError) throw new CliError(`export: ${err.message}`);
    throw err;
  }
  const { manifest } = done;
  if (values.json) console.log(JSON.stringify(manifest, null, 2));
  else
    console.log(
      `exported ${manifest.totals.calls} call${manifest.totals.calls === 1 ? '' : 's'}, ` +
        `${manifest.totals.files} files, ${manifest.totals.bytes.toLocaleString('en-US')} bytes to ${done.location}\n` +
        `request ${manifest.requestId}; manifest ${done.location.replace(/\/?$/, '/')}manifest.json; ` +
        `audit record s3://${places.output.bucket}/${done.auditKey}`,
    );
  return 0;
}
