// Worker entry for the `media` task queue.
import { main } from './run.ts';

main(['media']);
