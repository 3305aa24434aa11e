import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../schemas/config-loader.ts';
import { planOptionsOf } from '../../schemas/call-spec.ts';
import { planSessions } from '../../activities/media/plan.ts';

describe('planOptionsOf', () => {
  it('plans balanced by default, with the asr concurrent sessions as the budget', () => {
    expect(planOptionsOf(loadConfig({ env: {} }))).toEqual({
      strategy: 'balanced',
      maxSessionSeconds: 3000,
      budget: 16,
      minSessionSeconds: 60,
    });
  });

  it('follows CALLPIPE_PLAN_STRATEGY, CALLPIPE_MIN_SESSION_SECONDS and CALLPIPE_ASR_CONCURRENT_SESSIONS', () => {
    const config = loadConfig({
      env: {
        CALLPIPE_PLAN_STRATEGY: 'fixed',
        CALLPIPE_MIN_SESSION_SECONDS: '300',
        CALLPIPE_ASR_CONCURRENT_SESSIONS: '8',
      },
    });
    expect(planOptionsOf(config)).toMatchObject({ strategy: 'fixed', minSessionSeconds: 300, budget: 8 });
  });

  it('carries CALLPIPE_SPEAKER_ROLES and CALLPIPE_SEPARATE_VOICES to the channels when changed', () => {
    const config = loadConfig({ env: { CALLPIPE_SPEAKER_ROLES: 'fixed', CALLPIPE_SEPARATE_VOICES: 'off' } });
    expect(planOptionsOf(config).channels).toEqual({ roles: 'fixed', voices: 'off' });
    expect(() => loadConfig({ env: { CALLPIPE_SPEAKER_ROLES: 'swap' } })).toThrow(/CALLPIPE_SPEAKER_ROLES/);
  });

  it('names the variable of a bad strategy', () => {
    expect(() => loadConfig({ env: { CALLPIPE_PLAN_STRATEGY: 'fast' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { CALLPIPE_PLAN_STRATEGY: 'fast' } })).toThrow(/CALLPIPE_PLAN_STRATEGY/);
  });

  it('with the defaults, a 2-hour stereo call is cut into 8 sessions per channel (about 1/8 of its length)', () => {
    const duration = 7200;
    const { sessions } = planSessions({
      durationSeconds: duration,
      tracks: [
        { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
        { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
      ],
      silences: [[], []],
      options: planOptionsOf(loadConfig({ env: {} })),
    });
    expect(sessions).toHaveLength(16);
    // No silence here: each hard cut lands at the end of its search window, a little past the even split.
    expect(Math.max(...sessions.map((s) => s.end - s.start))).toBeLessThanOrEqual((duration / 8) * 1.05);
  });
});
