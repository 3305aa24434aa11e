// Worker entry for the `asr` task queue.
import { main } from './run.ts';

main(['asr']);
