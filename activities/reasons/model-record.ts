/**
 * Where `callpipe reasons train` keeps what it learnt (schemas/reasons.ts, ReasonModelRecord): beside the
 * results, `<output prefix>reasons/<model id>.json`. A model id is the service's, never a customer's value.
 */
import { KeyError, type OutputLocation } from '../../schemas/call-keys.ts';
import { MODEL_ID_PATTERN } from '../../schemas/rules.ts';

export function reasonModelKey(output: OutputLocation, modelId: string): string {
  if (!MODEL_ID_PATTERN.test(modelId)) throw new KeyError(`model id '${modelId}' is not a service model id`);
  return `${output.prefix}reasons/${modelId}.json`;
}
