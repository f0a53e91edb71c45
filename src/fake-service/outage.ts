import { RabbitError } from '../core/errors.js';
import type { Reply } from './payload.js';
import { errorReply } from './payload.js';

/**
 * The whole service going away for a while at a chosen request, as a deploy or a restart does:
 * `down` stops listening and drops every connection (clients get ECONNREFUSED and ECONNRESET) and
 * listens again on the same port; `503` answers everything with 503 and a Retry-After in seconds;
 * `429` answers everything with 429 and a Retry-After as an HTTP date (when the window ends).
 */
export type OutageKind = 'down' | '503' | '429';

export const OUTAGE_KINDS: readonly OutageKind[] = ['down', '503', '429'];

export interface OutageOptions {
  /** The request (counting every request from 1, assets included) that the outage begins with. */
  atRequest: number;
  /** How long it lasts, on the service's clock. */
  forMs: number;
  /** Default 'down'. */
  kind?: OutageKind;
}

/** What a request meets: nothing unusual, the start of a `down` outage, or the reply of a `503`/`429` one. */
export type OutageTurn = { type: 'none' } | { type: 'go-down'; forMs: number } | { type: 'reply'; reply: Reply };

export class OutagePlan {
  private requests = 0;
  private endsAt: number | undefined;

  constructor(private readonly options: OutageOptions) {}

  /** Outages begun so far (0 or 1). */
  get begun(): number {
    return this.endsAt === undefined ? 0 : 1;
  }

  onRequest(now: number): OutageTurn {
    this.requests++;
    const kind = this.options.kind ?? 'down';
    if (this.requests === this.options.atRequest) {
      this.endsAt = now + this.options.forMs;
      if (kind === 'down') return { type: 'go-down', forMs: this.options.forMs };
    }
    if (this.endsAt === undefined || now >= this.endsAt || kind === 'down') return { type: 'none' };
    return { type: 'reply', reply: outageReply(kind, this.endsAt, now) };
  }
}

function outageReply(kind: '503' | '429', endsAt: number, now: number): Reply {
  // Whole seconds, rounded up: a client that waits exactly as told finds the service back.
  if (kind === '503') {
    return errorReply(503, 'unavailable', 'service restarting', {
      'retry-after': String(Math.max(1, Math.ceil((endsAt - now) / 1000))),
    });
  }
  return errorReply(429, 'rate_limited', 'too many requests', {
    'retry-after': new Date(Math.ceil(endsAt / 1000) * 1000).toUTCString(),
  });
}

/** `serve --outage-kind`, checked. */
export function outageKind(value: string): OutageKind {
  if ((OUTAGE_KINDS as readonly string[]).includes(value)) return value as OutageKind;
  throw new RabbitError('USAGE', `--outage-kind takes ${OUTAGE_KINDS.join(', ')}, not ${JSON.stringify(value)}`);
}
