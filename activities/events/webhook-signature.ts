/**
 * Standard Webhooks signing (`standardwebhooks`, the specification's own library): the three headers of
 * a signed request. The timestamp is the attempt's (receivers refuse one too far from their clock), the
 * id the event's (receivers de-duplicate by it).
 */
import { Webhook } from 'standardwebhooks';

export function signedHeaders(
  secret: string,
  id: string,
  body: string,
  at: Date = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}
