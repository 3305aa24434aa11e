// Worker entry for the `workflows` task queue.
import { main } from './run.ts';

main(['workflows']);
