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
 * Slack for the clocks of the store and the workers: an object the store dates at least this long before
 * it was seen has been stable since, whatever the clocks (workflows/watch-settle.ts).
 */
export const WATCH_CLOCK_SLACK_SECONDS = 300;
/**
 * How far before the last complete pass a reconciliation still looks. S3 dates an object uploaded in parts
 * by when its upload began, not when it completed (and appeared), so an upload that took hours appears
 * with an old date: objects dated up to a day before the last complete pass began are looked at again
 * (their done-check costs a HEAD each; the done ones go no further).
 */
export const WATCH_RECONCILE_LOOKBACK_SECONDS = 86_400;
