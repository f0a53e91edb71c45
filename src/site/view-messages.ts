import type { FoundReference } from './tree-references.js';
import type { ViewFault } from './view-check.js';

/** What the view pool (view-pool.ts) and its worker threads (view-worker.ts) say to each other. */
export type ViewRequest =
  | { op: 'prepare'; id: number; body: Uint8Array; contentType: string | null }
  | { op: 'finish'; id: number; resolved: (string | undefined)[]; viewPath: string };

export type ViewReply =
  | { op: 'references'; id: number; references: FoundReference[] }
  | { op: 'view'; id: number; bytes: Uint8Array; fault?: ViewFault }
  | { op: 'failed'; id: number; message: string };
