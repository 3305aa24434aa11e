/**
 * A call's search attributes (schemas/search-attributes.ts): what `callpipe status`, `forget` and the Web
 * UI's filters read. Every upsert is a Temporal action (docs/cost.md), so a call upserts at two
 * milestones only: when its recognition starts and at its end; each carries its stage and every fact
 * learnt since (audio seconds, speakers, roles, categories), the end its outcome too. The call and batch
 * ids come free with the start (every starter sets them: cli/submit.ts, the backfill's and the watch's
 * children) and are upserted only when a start left them out. The precise stage stays free to see: the
 * Web UI's current details and the `progress` query follow every stage.
 */
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { Stage } from '../schemas/recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';

/**
 * The stage a run shows in `CallpipeStage` as it enters it, besides `done` and `failed`: `recognize`,
 * once its audio is all staged; it stays through the text steps (the long part of a call is
 * its recognition). Before it a call has no stage there.
 */
const MILESTONE_STAGES: ReadonlySet<Stage> = new Set<Stage>(['recognize']);

export class CallAttributes {
  /** Facts and the stage not yet upserted, by attribute name (a later value replaces an earlier one). */
  private readonly pending = new Map<string, SearchAttributeUpdatePair>();

  /** The call's and batch's ids: free when the start set them, as every starter of ours does. */
  start(callId: string, batchId: string | undefined): void {
    const ids: SearchAttributeUpdatePair[] = [
      { key: SEARCH_ATTRIBUTE_KEYS.callId, value: callId },
      ...(batchId ? [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: batchId }] : []),
    ];
    const given = workflowInfo().typedSearchAttributes;
    // Upserted at once, not at the first milestone: `forget` and `status` find a call by its id.
    const missing = ids.filter((p) => given.get(p.key as typeof SEARCH_ATTRIBUTE_KEYS.callId) !== p.value);
    if (missing.length) upsertSearchAttributes(missing);
  }

  /** Facts learnt (audio seconds, speakers, roles, categories, the outcome): shown by the next upsert. */
  set(pairs: SearchAttributeUpdatePair[]): void {
    for (const p of pairs) this.pending.set(p.key.name, p);
  }

  /** A stage entered: upserted with what is pending when it is a milestone. */
  stage(stage: Stage): void {
    this.set([{ key: SEARCH_ATTRIBUTE_KEYS.stage, value: stage }]);
    if (MILESTONE_STAGES.has(stage)) this.flush();
  }

  /** Everything pending, in one upsert (the end's); nothing when nothing is. */
  flush(): void {
    if (this.pending.size === 0) return;
    upsertSearchAttributes([...this.pending.values()]);
    this.pending.clear();
  }
}
