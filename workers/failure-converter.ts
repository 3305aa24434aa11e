/**
 * The failure converter Temporal loads by path (workers/payload-codec.ts FAILURE_CONVERTER_PATH), in the
 * worker and in the workflow sandbox: a failure's message and stack trace travel as an encoded payload
 * ("Encoded failure" in plain text), which the payload codec encrypts. Failures written before it, with
 * a plain message, still read as they were. Bundled into workflow code: imports nothing but Temporal's.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
