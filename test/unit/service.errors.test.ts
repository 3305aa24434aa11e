import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  ASR_OPERATOR_CODES,
  classifyCode,
  errorFromResponse,
  parseErrorBody,
  parseRetryAfter,
  ServiceError,
} from '../../service/errors.ts';

describe('classifyCode: every code of the spec and its class', () => {
  it.each([
    [99997, 'rateLimited'],
    [99995, 'quota'],
    [99996, 'quota'],
    [99998, 'auth'],
    [99993, 'invalid'],
    [6103, 'invalid'],
    [17001, 'invalid'],
    [17002, 'transient'],
  ] as const)('nlp code %i is %s', (code, kind) => {
    expect(classifyCode('nlp', code, 200)).toBe(kind);
  });

  it.each([
    [410, 'invalid'],
    [413, 'invalid'],
    [652, 'invalid'],
    [411, 'session'],
    [412, 'session'],
    [450, 'session'],
    [550, 'noResource'],
    [551, 'session'],
    [552, 'session'],
    [553, 'session'],
    [600, 'session'],
    [651, 'session'],
  ] as const)('asr code %i is %s', (code, kind) => {
    expect(classifyCode('asr', code, 400)).toBe(kind);
  });

  it('every operator code of spec 02 ends a stream session', () => {
    for (const code of ASR_OPERATOR_CODES) expect(classifyCode('asr', code, 500)).toBe('session');
  });

  it('450 is a session error, not auth, even though it is about a token', () => {
    expect(classifyCode('asr', 450, 401)).toBe('session');
  });

  it('shared nlp codes keep their class on the asr family (99997 during a stream)', () => {
    expect(classifyCode('asr', 99997, 200)).toBe('rateLimited');
    expect(classifyCode('asr', '99998', 401)).toBe('auth');
  });

  it('HTTP-level statuses without a code', () => {
    expect(classifyCode('nlp', undefined, 401)).toBe('auth');
    expect(classifyCode('nlp', undefined, 429)).toBe('rateLimited');
    expect(classifyCode('nlp', undefined, 502)).toBe('transient');
    expect(classifyCode('nlp', undefined, 503)).toBe('transient');
    expect(classifyCode('nlp', undefined, 400)).toBe('invalid');
    expect(classifyCode('nlp', undefined, undefined)).toBe('transient');
    expect(classifyCode('asr', undefined, 500)).toBe('transient');
    expect(classifyCode('auth', 401, 401)).toBe('auth');
  });
});

describe('parseErrorBody: every error format', () => {
  it('nlp envelope with status > 0', () => {
    expect(parseErrorBody({ result: {}, status: 99997, message: 'Too Many Requests' })).toEqual({
      format: 'envelope',
      code: 99997,
      serviceMessage: 'Too Many Requests',
    });
  });
  it('a success envelope is not an error', () => {
    expect(parseErrorBody({ result: [], status: 0, message: 'OK' })).toBeUndefined();
  });
  it('recognition error array: the last element carries errorinfo', () => {
    const body = [
      { msg: { msgname: 'recognized', uniqueId: 'u' }, result: { type: 1, sentence: [] } },
      {
        msg: { msgname: 'completed', uniqueId: 'u' },
        errorinfo: {
          code: 412,
          message: 'Interval Too Brief',
          level: 'E',
          detail: 'audio transmission interval is too short',
        },
      },
    ];
    expect(parseErrorBody(body)).toEqual({
      format: 'errorinfo',
      code: 412,
      serviceMessage: 'Interval Too Brief',
      detail: 'audio transmission interval is too short',
    });
  });
  it('errorinfo code given as a string becomes a number', () => {
    expect(
      parseErrorBody([{ errorinfo: { code: '450', message: 'Invalid Token', detail: 'token Error' } }])?.code,
    ).toBe(450);
  });
  it('fault body', () => {
    expect(
      parseErrorBody({ fault: { faultstring: 'Invalid Parameter', detail: { errorcode: '410' } } }),
    ).toEqual({
      format: 'fault',
      code: 410,
      serviceMessage: 'Invalid Parameter',
    });
  });
  it('fault body with a non-numeric errorcode keeps the string', () => {
    expect(
      parseErrorBody({
        fault: { faultstring: 'Invalid Access Token', detail: { errorcode: 'keymanagement.invalid' } },
      })?.code,
    ).toBe('keymanagement.invalid');
  });
  it('speech synthesis body', () => {
    expect(parseErrorBody({ code: '400', detail: 'text : must not be blank' })).toEqual({
      format: 'tts',
      code: 400,
      detail: 'text : must not be blank',
    });
  });
  it('anything else is not a known format', () => {
    expect(parseErrorBody('<html>Bad gateway</html>')).toBeUndefined();
    expect(parseErrorBody(undefined)).toBeUndefined();
  });
});

describe('errorFromResponse', () => {
  it('99997 is rateLimited with the Retry-After hint', () => {
    const err = errorFromResponse({
      family: 'nlp',
      endpoint: '/nlp/v1/sentiment',
      httpStatus: 200,
      body: { status: 99997, message: 'blocked' },
      retryAfter: '3',
    });
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.kind).toBe('rateLimited');
    expect(err.code).toBe(99997);
    expect(err.httpStatus).toBe(200);
    expect(err.endpoint).toBe('/nlp/v1/sentiment');
    expect(err.retryAfterMs).toBe(3000);
    expect(err.retryable).toBe(true);
  });
  it('quota codes are not retryable', () => {
    const err = errorFromResponse({
      family: 'nlp',
      endpoint: '/nlp/v1/keyword',
      httpStatus: 403,
      body: { status: 99996, message: 'limit' },
    });
    expect(err.kind).toBe('quota');
    expect(err.retryable).toBe(false);
  });
  it('the recorded 401 of the token endpoint is auth', () => {
    const err = errorFromResponse({
      family: 'auth',
      endpoint: 'token',
      httpStatus: 401,
      body: { result: {}, message: 'An error has occurred.', status: 401 },
    });
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('An error has occurred.');
  });
  it('5xx without a body is transient', () => {
    const err = errorFromResponse({
      family: 'nlp',
      endpoint: '/nlp/v1/summary',
      httpStatus: 503,
      body: undefined,
    });
    expect(err.kind).toBe('transient');
    expect(err.code).toBeUndefined();
  });
  it('summarization 17001 at HTTP 400 is invalid', () => {
    const err = errorFromResponse({
      family: 'nlp',
      endpoint: '/nlp/v1/summary',
      httpStatus: 400,
      body: { status: 17001, message: 'validation' },
    });
    expect(err.kind).toBe('invalid');
  });
  it('a stream 450 in an error array is a session error with its detail', () => {
    const err = errorFromResponse({
      family: 'asr',
      endpoint: '/asr/v1/speech_recognition/ja-gen_tf-08',
      httpStatus: 400,
      body: [
        {
          msg: { msgname: 'completed' },
          errorinfo: { code: 450, message: 'Invalid Token', detail: 'token Error' },
        },
      ],
    });
    expect(err.kind).toBe('session');
    expect(err.detail).toBe('token Error');
  });
  it('serializes to plain data without a cause', () => {
    const err = new ServiceError({ kind: 'transient', message: 'x', cause: new Error('socket') });
    const json = JSON.parse(JSON.stringify(err)) as Record<string, unknown>;
    expect(json.kind).toBe('transient');
    expect(json).not.toHaveProperty('cause');
    expect(inspect(err)).toContain('ServiceError(transient)');
  });
});

describe('gateway envelopes in front of the recognizer', () => {
  it('a 403 envelope on asr (account without speech recognition) is auth, not session', () => {
    const err = errorFromResponse({
      family: 'asr',
      endpoint: '/asr/v1/speech_recognition/m',
      httpStatus: 403,
      body: { result: {}, message: 'An error has occurred.', status: 403 },
    });
    expect(err.kind).toBe('auth');
  });
  it('a 401 envelope on asr is auth (and so triggers the one token refresh)', () => {
    const err = errorFromResponse({
      family: 'asr',
      endpoint: '/asr/v1/speech_recognition/m',
      httpStatus: 401,
      body: { result: {}, message: 'An error has occurred.', status: 401 },
    });
    expect(err.kind).toBe('auth');
  });
  it('a 99997 envelope on asr stays rateLimited', () => {
    const err = errorFromResponse({
      family: 'asr',
      endpoint: '/asr/v1/speech_recognition/m',
      httpStatus: 429,
      body: { status: 99997, message: 'x' },
    });
    expect(err.kind).toBe('rateLimited');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
