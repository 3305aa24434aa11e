// All task queues in one process: the local stack's worker.
import { main } from './run.ts';
import { QUEUE_NAMES } from './workers.ts';

main(QUEUE_NAMES);
