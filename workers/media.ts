// Worker entry for the `media` task queue and its `probe` queue (a media worker probes too).
import { main } from './run.ts';

main(['media', 'probe']);
