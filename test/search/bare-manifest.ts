/** The fields a manifest opens with, as the export writes them: what says it is one, and of which format. */
export const MANIFEST_HEAD = {
  formatVersion: 1,
  tool: { name: 'rabbit-export', version: '1.0.0' },
  source: { baseUrl: 'https://rabbit.example' },
  startedAt: '2024-05-01T10:00:00.000Z',
  finishedAt: '2024-05-01T10:01:00.000Z',
  complete: true,
};

/**
 * A manifest that lists nothing, its head first: what an archive of crafted search parts holds so
 * that ls reads it, and search with it (which refuses an archive without a manifest, as ls does).
 */
export const BARE_MANIFEST = JSON.stringify({ ...MANIFEST_HEAD, prototypes: {}, files: [], errors: [] }, null, 2);
