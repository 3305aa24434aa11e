/**
 * Speech recognition errors (spec 02, Errors): the code is also the HTTP status, and the body is a JSON
 * array whose last element is a `completed` message carrying `errorinfo {code, message, level, detail}`
 * (as the official sample clients read it).
 *
 * Not shown in the spec, chosen here: `cause` of an error's `completed` is `ERROR`; `level` is `ERROR`;
 * where the table says the detail is "none" the detail is an empty string.
 */
export interface AsrError {
  code: number;
  message: string;
  detail: string;
}

export const asrErrors = {
  invalidParameter: (detail: string): AsrError => ({ code: 410, message: 'Invalid Parameter', detail }),
  invalidState: (): AsrError => ({ code: 411, message: 'Invalid State', detail: 'Invalid Unique ID' }),
  intervalTooBrief: (): AsrError => ({
    code: 412,
    message: 'Interval Too Brief',
    detail: 'audio transmission interval is too short',
  }),
  invalidData: (): AsrError => ({ code: 413, message: 'Invalid Data', detail: 'Data is not available' }),
  invalidToken: (): AsrError => ({ code: 450, message: 'Invalid Token', detail: 'token Error' }),
  noResource: (): AsrError => ({
    code: 550,
    message: 'No Resource',
    detail: 'VRG_RESPONSE_SERVICE_UNAVAILABLE',
  }),
  networkError: (): AsrError => ({ code: 552, message: 'Network Error', detail: 'Network' }),
  internalError: (): AsrError => ({ code: 600, message: 'Internal Error', detail: '' }),
  sessionTimeout: (): AsrError => ({ code: 651, message: 'Session Timeout', detail: '' }),
  maxVoiceLength: (): AsrError => ({
    code: 652,
    message: 'Excess Of Max Voice Length',
    detail: 'limit 60 seconds',
  }),
};

/** Builds an injectable error from its code (fault injection). */
export function asrErrorOf(code: 550 | 552 | 600 | 651): AsrError {
  switch (code) {
    case 550:
      return asrErrors.noResource();
    case 552:
      return asrErrors.networkError();
    case 600:
      return asrErrors.internalError();
    case 651:
      return asrErrors.sessionTimeout();
  }
}

export function errorBody(uniqueId: string, error: AsrError) {
  return [
    {
      msg: { msgname: 'completed', uniqueId, cause: 'ERROR' },
      errorinfo: { code: error.code, message: error.message, level: 'ERROR', detail: error.detail },
    },
  ];
}
