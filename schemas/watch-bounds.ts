/**
 * The numbers of a watch (schemas/watch.ts): defaults of its settings and its bounds. No imports, so the
 * watch workflow takes them without bundling the schemas behind them.
 */
/** How long a recording's size and ETag must stay the same before it is taken (`--settle`). */
export const DEFAULT_SETTLE_SECONDS = 30;
/** How often the prefix is listed after the watermark (or the queue long-polled, with `--sqs`). */
export const DEFAULT_POLL_SECONDS = 5;
/** How often the whole prefix is listed again, for keys that sort before the watermark (`--reconcile`). */
export const DEFAULT_RECONCILE_SECONDS = 600;
/** Objects one listing activity returns at most (one S3 ListObjectsV2 page). */
export const DEFAULT_WATCH_PAGE_SIZE = 1000;
/**
 * Objects a watch holds while they settle. Past it, listing stops at the last object it could take and
 * goes on from there once some have been started: 100,000 objects landing at once are taken in key
 * order, never all held in the workflow's state (each entry is about 150 bytes of a 2 MB payload).
 */
export const DEFAULT_MAX_PENDING = 2000;
/**
 * A watch's run continues as new past this many history events (Temporal's limit is 51,200): a tick costs
 * about ten, a child about six.
 */
export const WATCH_HISTORY_EVENTS = 10_000;
/**
 * Slack for the clocks of the store and the workers, and for listings that lag behind writes: an object
 * modified up to this long before a complete reconciliation began is looked at again by the next one.
 */
export const WATCH_CLOCK_SLACK_SECONDS = 300;
