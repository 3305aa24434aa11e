/**
 * The events' configuration (schemas/events.ts through loadConfig): webhook URLs comma-separated, a
 * Standard Webhooks secret required with them, and every bad value refused at start with the variable's
 * name and never the value (a webhook URL or secret is a credential).
 */
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../schemas/config-loader.ts';
import { sinksFor } from '../../schemas/events.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const load = (env: Record<string, string>) => loadConfig({ env: { CALLPIPE_CONFIG: '', ...env } });

function refusal(env: Record<string, string>): string {
  try {
    load(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('events configuration', () => {
  it('has no sink by default, and the 24-hour delivery window', () => {
    const { events } = load({});
    expect(events.webhookUrls).toEqual([]);
    expect(events.deliverForSeconds).toBe(86_400);
    expect(sinksFor(events, 'callpipe.call.completed')).toEqual([]);
  });

  it('reads several webhook URLs, comma-separated, and names them by index as sinks', () => {
    const { events } = load({
      CALLPIPE_EVENTS_WEBHOOK_URL: ' https://a.example.com/hook , http://127.0.0.1:9000/in',
      CALLPIPE_EVENTS_WEBHOOK_SECRET: secret,
      CALLPIPE_EVENTS_SLACK_URL: 'https://hooks.slack.example/services/T/B/x',
      CALLPIPE_EVENTS_RETRY_INITIAL_SECONDS: '0.5',
    });
    expect(events.webhookUrls).toEqual(['https://a.example.com/hook', 'http://127.0.0.1:9000/in']);
    expect(events.retryInitialSeconds).toBe(0.5);
    expect(sinksFor(events, 'callpipe.call.completed')).toEqual(['webhook:0', 'webhook:1']);
    // Slack gets alerts only.
    expect(sinksFor(events, 'callpipe.call.alert')).toEqual(['webhook:0', 'webhook:1', 'slack']);
  });

  it('refuses a webhook URL without a secret, naming the secret’s variable', () => {
    expect(refusal({ CALLPIPE_EVENTS_WEBHOOK_URL: 'https://a.example.com/hook' })).toMatch(
      /CALLPIPE_EVENTS_WEBHOOK_SECRET: required with webhook URLs/,
    );
  });

  it.each([
    ['not whsec_', 'abcdefabcdefabcdefabcdefabcdef', /whsec_ followed by the key in base64/],
    ['too short a key', `whsec_${randomBytes(8).toString('base64')}`, /24 to 64 bytes.*this one is 8/],
    ['not base64', 'whsec_not base64 at all!!', /whsec_ followed by the key/],
  ])('refuses a bad secret (%s) without echoing it', (_, value, message) => {
    const text = refusal({
      CALLPIPE_EVENTS_WEBHOOK_URL: 'https://a.example.com/h',
      CALLPIPE_EVENTS_WEBHOOK_SECRET: value,
    });
    expect(text).toMatch(/CALLPIPE_EVENTS_WEBHOOK_SECRET/);
    expect(text).toMatch(message);
    expect(text).not.toContain(value);
  });

  it.each([
    ['not a URL', 'hooks.example.com/x?token=SECRETTOKEN', /URL 2 of 2 is not a URL/],
    ['another scheme', 'ftp://example.com/SECRETTOKEN', /URL 2 of 2 must be an http/],
    ['credentials in it', 'https://user:SECRETTOKEN@example.com/h', /URL 2 of 2 must not hold a user name/],
  ])('refuses an invalid webhook URL (%s) at load, without echoing it', (_, bad, message) => {
    const text = refusal({
      CALLPIPE_EVENTS_WEBHOOK_URL: `https://ok.example.com/h,${bad}`,
      CALLPIPE_EVENTS_WEBHOOK_SECRET: secret,
    });
    expect(text).toMatch(/CALLPIPE_EVENTS_WEBHOOK_URL/);
    expect(text).toMatch(message);
    expect(text).not.toContain('SECRETTOKEN');
  });

  it('refuses an invalid Slack URL and a longest retry delay below the first', () => {
    expect(refusal({ CALLPIPE_EVENTS_SLACK_URL: 'slack' })).toMatch(
      /CALLPIPE_EVENTS_SLACK_URL: the URL is not a URL/,
    );
    expect(
      refusal({ CALLPIPE_EVENTS_RETRY_INITIAL_SECONDS: '60', CALLPIPE_EVENTS_RETRY_MAX_SECONDS: '10' }),
    ).toMatch(/CALLPIPE_EVENTS_RETRY_MAX_SECONDS: must be at least the first retry delay/);
  });
});
