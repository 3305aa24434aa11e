/**
 * `callpipe dictionary upload|clear|status|download`: the user dictionary of the recognition model
 * (spec 02, Japanese models), as the service keeps it per model and domain. Talks to the service only
 * (the local stack's emulator when one runs), not to Temporal.
 */
import { writeFileSync } from 'node:fs';
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { readDictionaryFile } from '../call-files.ts';
import { createServiceClient, isServiceError } from '../../service/index.ts';
import { dictionaryLines, MAX_USER_DICTIONARY_LINES } from '../../service/dictionary.ts';

export const summary = "manages the recognition model's user dictionary: upload, clear, status, download";
export const help = `Usage: callpipe dictionary upload <file> | clear | status | download [--out file] [--model m] [--domain d] [--json]

The user dictionary of a recognition model and domain (default CALLPIPE_MODEL, CALLPIPE_DOMAIN_ID), as spec 02
keeps it: a file of lines notation<TAB>reading[<TAB>weight 1-100] (at most ${MAX_USER_DICTIONARY_LINES}), checked
before it is sent. An upload replaces the model's dictionary; an upload or a clear takes effect when the
service reflects it, on the hour (minute 0), not at once: \`status\` says whether it has been reflected.
For a vocabulary that counts from the next session on, give --dictionary to process, backfill or schedule
(sent with every start request as the temporary dictionary, at most 1,000 words).

  upload <file>   checks and uploads the file; prints what the service took
  clear           deletes the model's user dictionary
  status          whether an upload or clear is still waiting to be reflected
  download        the last uploaded dictionary, as dictionary lines (to --out, else stdout)`;

const REFLECTION =
  'the service reflects user dictionary changes on the hour (minute 0): recognition uses the previous ' +
  'dictionary until then; `callpipe dictionary status` says when it is reflected';

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('dictionary', argv, {
    out: { type: 'string' },
    model: { type: 'string' },
    domain: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const [operation, file, ...rest] = positionals;
  if (!operation || !['upload', 'clear', 'status', 'download'].includes(operation) || rest.length > 0)
    throw new CliError('dictionary: upload <file> | clear | status | download (see --help)');
  if ((operation === 'upload') !== (file !== undefined))
    throw new CliError(
      operation === 'upload' ? 'dictionary upload: give the file' : `dictionary ${operation} takes no file`,
    );
  const entries = operation === 'upload' ? readDictionaryFile(file!, MAX_USER_DICTIONARY_LINES) : [];

  const { config } = pipelineConfig();
  const client = createServiceClient(config.service);
  const target = {
    model: values.model ?? config.service.model,
    domainId: values.domain ?? config.service.domainId,
  };
  const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json) : text);
  try {
    switch (operation) {
      case 'upload': {
        const answer = await client.userDictionary.upload(entries, target);
        print(
          { ...target, uploaded: answer.result.length, entries: answer.result, reflected: false },
          `uploaded ${answer.result.length} entries to ${target.model} (domain ${target.domainId}); ${REFLECTION}`,
        );
        return 0;
      }
      case 'clear':
        await client.userDictionary.clear(target);
        print(
          { ...target, cleared: true, reflected: false },
          `cleared the user dictionary of ${target.model}; ${REFLECTION}`,
        );
        return 0;
      case 'status': {
        const { result } = await client.userDictionary.isSet(target);
        print(
          { ...target, isSet: result },
          result
            ? `${target.model}: no change waiting (the last upload or clear, if any, is in use)`
            : `${target.model}: a change is waiting for the top of the hour (not in use yet)`,
        );
        return 0;
      }
      default: {
        const { result } = await client.userDictionary.download(target);
        const text = dictionaryLines(result);
        if (values.out) {
          writeFileSync(values.out, text);
          print(
            { ...target, entries: result.length, out: values.out },
            `${result.length} entries written to ${values.out}`,
          );
        } else if (values.json) print({ ...target, entries: result }, '');
        else process.stdout.write(result.length > 0 ? text : '');
        return 0;
      }
    }
  } catch (err) {
    if (isServiceError(err)) throw new CliError(`dictionary ${operation}: ${err.message}`, 1);
    throw err;
  }
}
