/**
 * The demo's call reasons model: trained once per stack from labelled examples of the demo's reason
 * scenarios (activities/media/call-script.ts REASON_LINES: short scripted calls of each reason, the
 * customer's words as the phrasebook prints them, their first CALLPIPE_REASONS_CHARS characters, as calls
 * are classified), kept in `<home>/demo/reasons-model.json` and reused while the account still has it.
 * The demo goes on without reasons when the service refuses (10 models already, an account without text
 * classification): it says why.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REASON_LINES, scriptedCall, type ScriptedReason } from '../activities/media/call-script.ts';
import { DEFAULT_PHRASEBOOK_PATH, loadPhrasebook } from '../emulator/phrasebook.ts';
import { trainingCsv } from '../schemas/classifier-dataset.ts';
import { MAX_CLASSIFIER_MODELS } from '../schemas/classifier-limits.ts';
import type { ServiceClient } from '../service/index.ts';

/** Examples per reason, each a short scripted call of another seed. */
const EXAMPLES = 8;
const TRAINING_WAIT_MS = 120_000;

/** The labelled examples: per reason, the customer's opening words of scripted calls. */
function demoExamples(chars: number): { class: string; text: string }[] {
  const book = loadPhrasebook(DEFAULT_PHRASEBOOK_PATH);
  return (Object.keys(REASON_LINES) as ScriptedReason[]).flatMap((reason) =>
    Array.from({ length: EXAMPLES }, (_, i) => {
      const { script } = scriptedCall({ durationSeconds: 120, stereo: true, seed: 7000 + i * 31, reason });
      const said = script.channels[1]!.phrases.map((p) => book.get(p.id) ?? '').join(' ');
      return { class: reason, text: [...said].slice(0, chars).join('') };
    }),
  );
}

async function completed(client: ServiceClient, id: string): Promise<boolean> {
  const until = Date.now() + TRAINING_WAIT_MS;
  for (;;) {
    const { result } = await client.classifier.status(id);
    if (result.model_status !== 'processing') return result.model_status === 'completed';
    if (Date.now() > until) return false;
    await sleep(500);
  }
}

/** The demo's model id, trained now if needed; undefined (and why, in the log) when there is none. */
export async function demoReasonsModel(
  client: ServiceClient,
  home: string,
  chars: number,
  log: (line: string) => void,
): Promise<string | undefined> {
  const file = join(home, 'demo', 'reasons-model.json');
  try {
    const { result: models } = await client.classifier.list();
    const kept = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as { modelId?: string }).modelId
      : undefined;
    if (kept && models.some((m) => m.model_id === kept && m.model_status === 'completed')) return kept;
    if (models.length >= MAX_CLASSIFIER_MODELS) {
      log(`call reasons skipped: the account holds ${models.length} models (callpipe reasons delete <id>)`);
      return undefined;
    }
    const { result: id } = await client.classifier.learn(trainingCsv(demoExamples(chars)));
    log(`training the demo's call reasons model ${id} (${Object.keys(REASON_LINES).join(', ')})…`);
    if (!(await completed(client, id))) {
      log(`call reasons skipped: model ${id} did not complete`);
      return undefined;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ modelId: id })}\n`);
    return id;
  } catch (err) {
    log(`call reasons skipped: ${(err as Error).message}`);
    return undefined;
  }
}
