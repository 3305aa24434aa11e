/** Client-side validation of request bodies: a bad input fails before it costs a request. */
import type { z } from 'zod';
import { invalidInput } from '../errors.ts';

export function validateRequest<S extends z.ZodType>(endpoint: string, schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
    throw invalidInput(endpoint, `${field}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data as z.infer<S>;
}
