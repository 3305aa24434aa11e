/**
 * Exit codes a worker process chooses, for whoever supervises it (`callpipe up`, Docker's restart policy)
 * to tell why it ended. No imports: the CLI reads these without loading the workers.
 */

/** The event-loop watchdog stopped the process: an activity blocked its event loop (EX_SOFTWARE). */
export const WATCHDOG_EXIT_CODE = 70;
