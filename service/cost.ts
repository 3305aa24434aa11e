/**
 * What a call cost, so results can say it (docs/design.md, Output: "processing facts such as requests made
 * and retries"). A {@link CostMeter} is mutable and can be shared by several calls (one per recording);
 * a {@link CallCost} is its frozen snapshot.
 */

export interface CallCost {
  /** HTTP requests sent to the service (token requests included). */
  requests: number;
  /** Requests that repeated an earlier one: the token-refresh retry, and retries of the retry helper. */
  retries: number;
  /** Request body bytes sent. */
  bytesSent: number;
  /** Response body bytes received. */
  bytesReceived: number;
}

export class CostMeter {
  requests = 0;
  retries = 0;
  bytesSent = 0;
  bytesReceived = 0;

  private readonly parent?: CostMeter;
  constructor(parent?: CostMeter) {
    this.parent = parent;
  }

  addRequest(bytesSent: number): void {
    this.requests += 1;
    this.bytesSent += bytesSent;
    this.parent?.addRequest(bytesSent);
  }

  addReceived(bytes: number): void {
    this.bytesReceived += bytes;
    this.parent?.addReceived(bytes);
  }

  addRetry(): void {
    this.retries += 1;
    this.parent?.addRetry();
  }

  snapshot(): CallCost {
    return {
      requests: this.requests,
      retries: this.retries,
      bytesSent: this.bytesSent,
      bytesReceived: this.bytesReceived,
    };
  }
}

export function addCosts(a: CallCost, b: CallCost): CallCost {
  return {
    requests: a.requests + b.requests,
    retries: a.retries + b.retries,
    bytesSent: a.bytesSent + b.bytesSent,
    bytesReceived: a.bytesReceived + b.bytesReceived,
  };
}
