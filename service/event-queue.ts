/**
 * A single-consumer async queue: the session pushes events as responses arrive, `for await` pulls them.
 * Events are buffered until read (a session's results are small: text and times), so a consumer that
 * starts iterating late still sees everything from `started` on.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | undefined;
  #failWaiting: ((err: unknown) => void) | undefined;
  #closed = false;
  #error: unknown;
  #failed = false;

  push(item: T): void {
    if (this.#closed) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      this.#failWaiting = undefined;
      resolve({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  /** Ends the iteration, with an error for the consumer when given. */
  close(error?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    if (error !== undefined) {
      this.#failed = true;
      this.#error = error;
    }
    if (this.#waiting && this.#items.length === 0) {
      const resolve = this.#waiting;
      const reject = this.#failWaiting;
      this.#waiting = undefined;
      this.#failWaiting = undefined;
      if (this.#failed) reject?.(this.#error);
      else resolve({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift()!, done: false });
        if (this.#closed) {
          return this.#failed
            ? Promise.reject(this.#error)
            : Promise.resolve({ value: undefined, done: true });
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.#waiting = resolve;
          this.#failWaiting = reject;
        });
      },
      return: () => {
        this.#items = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
