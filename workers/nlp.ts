// Worker entry for the `nlp` task queue.
import { main } from './run.ts';

main(['nlp']);
