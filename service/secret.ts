/**
 * A value that must never be printed or serialized: client secrets and access tokens (docs/design.md:
 * "Secrets never enter workflow arguments, history, logs or results"). The value lives in a private
 * field, so `JSON.stringify`, `util.inspect`, `console.log`, template strings and structured logs all
 * see `[redacted]`; only an explicit `reveal()` at the point of use (a request header) reads it.
 */
import { inspect } from 'node:util';

export const REDACTED = '[redacted]';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret itself; call only where it goes on the wire. */
  reveal(): string {
    return this.#value;
  }

  equals(other: Secret): boolean {
    return this.#value === other.#value;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
