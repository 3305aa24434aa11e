export { createServiceClient } from './client.ts';
export type { ServiceClient } from './client.ts';
export { ServiceError, SERVICE_ERROR_KINDS, isServiceError, type ServiceErrorKind } from './errors.ts';
export { CostMeter, addCosts, type CallCost } from './cost.ts';
export { audioOffset } from './audio.ts';
export { type RecognizedUtterance } from './stream-session.ts';
export { type NlpCallOptions } from './nlp/call.ts';
