/**
 * Recognition checkpoints: the progress of every session this asr process is recognizing, kept in
 * object storage so that a crashed worker's session resumes near where it stopped.
 *
 * One object per call and process (`<call staging>checkpoints/<writerId>.json`), not one per session: a
 * call's sessions stream side by side, and when any of them has {@link CHECKPOINT_AUDIO_SECONDS} of newly
 * recognized audio since it was last written, one PUT writes all of them, and each counts as written.
 * Every session is still written at least once per that much of its own audio (what a crash re-streams
 * at most), while a call of many sessions costs about one PUT per interval instead of one per session.
 * Writes of one object are serialized and each takes the newest progress when it starts, so a burst of
 * due sessions costs one write. A failed write never rejects (an unhandled rejection ends the process):
 * the next one carries a newer snapshot.
 *
 * A retried attempt (and only a retried one) looks its session up: one LIST of the call's checkpoints,
 * a GET of each (usually one), and a GET of the session's own partial key, which an attempt that ended
 * without its result wrote (and which older releases wrote every 30 s). The newest progress wins: a
 * zombie attempt may have written later than the one that failed, of the same audio.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { partialResultKey, sessionCheckpointKey, sessionCheckpointsPrefix } from '../../schemas/call-keys.ts';
import { listObjectsUnder, type ObjectStore } from '../storage/object-store.ts';
import { activityContext } from '../activity-context.ts';
import { partialSchema, type PartialProgress, type RecognizeSessionInput } from './session-types.ts';

/**
 * A session's progress is written when a final result arrives and this much audio has been recognized
 * since its last write: a crash re-streams at most about that much audio. Time alone never writes.
 */
export const CHECKPOINT_AUDIO_SECONDS = 30;

/** A checkpoint object: the sessions of one call one process was recognizing, by session number. */
const checkpointSchema = z.object({
  version: z.literal(1),
  sessions: z.record(z.string(), partialSchema.extend({ start: z.number(), end: z.number() })),
});
type CheckpointObject = z.infer<typeof checkpointSchema>;

/** One session attempt's place in the book. */
export interface BookEntry {
  /**
   * Writes the call's checkpoint when this session is due (or `force`d); resolves, never rejecting, once
   * the write that carries its progress as of now has ended (at once when none is due).
   */
  stage(force?: boolean): Promise<void>;
  /** The attempt ended: the session is left out of the call's next writes. */
  leave(): void;
}

export interface CheckpointBook {
  /** The process's id in checkpoint keys: random letters, nothing of the host (digits would read as a number). */
  readonly writerId: string;
  /** Enters a session attempt whose progress is `state` (kept up to date by its stream). */
  enter(input: RecognizeSessionInput, state: PartialProgress): BookEntry;
}

interface Entry {
  readonly input: RecognizeSessionInput;
  readonly state: PartialProgress;
  /** `state.resumeAt` when a write last took this session's progress. */
  writtenAt: number;
  /** The write that carries its progress as of its last stage. */
  lastWrite: Promise<void>;
}

interface CallGroup {
  readonly key: string;
  readonly sessions: Map<number, Entry>;
  /** The write last queued (never rejects). */
  last: Promise<void>;
  /** A queued write that has not taken its snapshot yet: later stages share it. */
  next: Promise<void> | undefined;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function randomWriterId(): string {
  return [...randomBytes(16)].map((b) => LETTERS[b % LETTERS.length]).join('');
}

export function createCheckpointBook(store: ObjectStore, writerId = randomWriterId()): CheckpointBook {
  const groups = new Map<string, CallGroup>();

  function snapshot(group: CallGroup): string | undefined {
    const sessions: CheckpointObject['sessions'] = {};
    for (const [session, entry] of group.sessions) {
      entry.writtenAt = entry.state.resumeAt;
      if (entry.state.resumeAt <= entry.input.start) continue;
      sessions[String(session)] = { ...entry.state, start: entry.input.start, end: entry.input.end };
    }
    if (Object.keys(sessions).length === 0) return undefined;
    return JSON.stringify({ version: 1, sessions } satisfies CheckpointObject);
  }

  function queueWrite(group: CallGroup): Promise<void> {
    if (group.next) return group.next;
    const write = group.last.then(async () => {
      group.next = undefined;
      const body = snapshot(group);
      if (body === undefined) return;
      try {
        await store.put(group.key, body, { contentType: 'application/json' });
      } catch (err) {
        activityContext()?.log.warn('could not write the recognition checkpoint; the next write will', {
          sessions: [...group.sessions.keys()],
          reason: err instanceof Error ? err.message : String(err),
        });
      }
    });
    group.next = write;
    group.last = write;
    return write;
  }

  function enter(input: RecognizeSessionInput, state: PartialProgress): BookEntry {
    const key = sessionCheckpointKey(input.resultKey, writerId);
    let group = groups.get(key);
    if (!group) {
      group = { key, sessions: new Map(), last: Promise.resolve(), next: undefined };
      groups.set(key, group);
    }
    const entry: Entry = { input, state, writtenAt: state.resumeAt, lastWrite: Promise.resolve() };
    // A retried attempt may start here while the one it replaces still winds down: the newest counts.
    group.sessions.set(input.session, entry);
    const own = group;
    return {
      stage(force = false) {
        const due = entry.state.resumeAt - entry.writtenAt >= CHECKPOINT_AUDIO_SECONDS;
        if (force || due) entry.lastWrite = queueWrite(own);
        return entry.lastWrite;
      },
      leave() {
        if (own.sessions.get(input.session) === entry) own.sessions.delete(input.session);
        if (own.sessions.size > 0) return;
        // Forgotten once its writes are done, unless a session came back meanwhile: two groups of one
        // key would write it out of order.
        void own.last.then(() => {
          if (own.sessions.size === 0 && groups.get(key) === own) groups.delete(key);
        });
      },
    };
  }

  return { writerId, enter };
}

/**
 * Writes an unfinished attempt's progress to the session's own partial key, where its retry finds it
 * whatever this process's checkpoint of the call holds by then. Never rejects.
 */
export async function keepUnfinished(
  store: ObjectStore,
  input: RecognizeSessionInput,
  state: PartialProgress,
): Promise<void> {
  if (state.resumeAt <= input.start) return;
  try {
    await store.put(partialResultKey(input.resultKey), JSON.stringify(state), {
      contentType: 'application/json',
    });
  } catch (err) {
    activityContext()?.log.warn('could not keep the unfinished session progress', {
      session: input.session,
      reason: err instanceof Error ? err.message : String(err),
    });
  }
}

/** A progress of this session that resumes within it, or undefined. */
function usable(progress: PartialProgress | undefined, input: RecognizeSessionInput) {
  return progress && progress.resumeAt > input.start && progress.resumeAt < input.end ? progress : undefined;
}

async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  const found = await store.read(key);
  if (!found) return undefined;
  try {
    return JSON.parse(found.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

async function checkpointKeysOf(store: ObjectStore, prefix: string): Promise<string[]> {
  const objects = await listObjectsUnder(store, prefix);
  return objects.map((o) => o.key).filter((k) => k.endsWith('.json'));
}

/**
 * The newest progress any attempt kept of this session (the largest resume point within it), from
 * every process's checkpoint of the call and from the session's own partial key; undefined when none.
 */
export async function findProgress(
  store: ObjectStore,
  input: RecognizeSessionInput,
): Promise<PartialProgress | undefined> {
  const keys = await checkpointKeysOf(store, sessionCheckpointsPrefix(input.resultKey));
  const [own, ...books] = await Promise.all([
    readJson(store, partialResultKey(input.resultKey)),
    ...keys.map((key) => readJson(store, key)),
  ]);
  const found: PartialProgress[] = [];
  const kept = partialSchema.safeParse(own);
  if (kept.success && usable(kept.data, input)) found.push(kept.data);
  for (const body of books) {
    const book = checkpointSchema.safeParse(body);
    if (!book.success) continue;
    const entry = book.data.sessions[String(input.session)];
    if (!entry || entry.start !== input.start || entry.end !== input.end) continue;
    const { start: _start, end: _end, ...progress } = entry;
    if (usable(progress, input)) found.push(progress);
  }
  return found.reduce<PartialProgress | undefined>(
    (best, p) => (best === undefined || p.resumeAt > best.resumeAt ? p : best),
    undefined,
  );
}
