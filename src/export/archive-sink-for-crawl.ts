import type { RabbitError } from '../core/errors.js';
import { JOURNAL_ORIGIN, type CrawlSink, type PrototypeContext } from '../crawl/crawl-account.js';
import type { ArchiveModel } from '../manifest/archive-model.js';
import { manifestErrorOf } from '../manifest/manifest-error.js';
import type { JournalWriter } from '../storage/journal.js';
import type { StoredFile } from '../storage/stored-file.js';
import type { OfflineViewer } from '../site/build-viewer.js';
import type { EventSink } from './events.js';
import { progressHooks } from './fetch-setup.js';

export interface ArchiveSinkParts {
  /** The archive's manifest: every body, error and prototype the crawl reports goes in. */
  model: ArchiveModel;
  /** Hears of each body stored (page renderings are scanned for their assets) and each prototype done. */
  viewer: OfflineViewer;
  /** This output's journal: what a resumed run may reuse. */
  journal: JournalWriter;
  emit: EventSink;
  /** A resource failed for good, after it was recorded in the manifest (the run's counts, the error event). */
  failed(source: string, error: RabbitError): void;
}

/**
 * What an export does with what the crawl finds: bodies and errors into the manifest (and so into
 * the zip), each body of a prototype into the journal and before the viewer, the milestones as
 * progress events.
 */
export function archiveSinkForCrawl(parts: ArchiveSinkParts): CrawlSink {
  const { model, viewer, journal, emit } = parts;
  const progress = progressHooks(emit, (id) => viewer.prototypeDone(id));
  return {
    ...progress,
    prototype(context: PrototypeContext, name, details) {
      model.addPrototype({
        id: context.id,
        name,
        lastModification: context.lastModification,
        lastUser: details.lastUser,
        revision: context.revision,
        milestone: details.milestone,
        origin: { mode: 'fetched' },
      });
      progress.prototype(context, name, details);
    },
    stored(file: StoredFile, proto, reusedFrom) {
      model.addFile(proto?.id, file);
      if (!proto) return;
      viewer.stored(file, proto.id);
      model.noteOrigin(proto.id, file, reusedFrom === JOURNAL_ORIGIN ? undefined : reusedFrom);
      // A copy from the journal is already in it.
      if (reusedFrom !== JOURNAL_ORIGIN) journal.record(file, proto, reusedFrom);
      if (reusedFrom !== undefined) emit({ type: 'reused', source: file.source, bytes: file.size });
    },
    failed(source, error) {
      model.addError(manifestErrorOf(source, error));
      parts.failed(source, error);
    },
    notOffered(source, status) {
      model.addNotOffered(source, status);
    },
  };
}
