import type { ArchiveDiff, DiffedPrototype, PrototypeChange } from '../diff/diff-archives.js';
import { CATEGORIES } from '../diff/diff-archives.js';
import { clean } from './format-archive.js';

/** Items shown per category and kind before "... and N more". */
const MAX_ITEMS = 20;

/** Pure text for `diff`; the command prints it. Names come from the service: untrusted. */
export function formatDiff(diff: ArchiveDiff): string {
  const lines = [
    `from ${clean(diff.a.archive)} (${diff.a.finishedAt})`,
    `  to ${clean(diff.b.archive)} (${diff.b.finishedAt})`,
    '',
  ];
  for (const proto of diff.added) lines.push(`+ prototype ${describe(proto)} r${proto.revision}`);
  for (const proto of diff.removed) lines.push(`- prototype ${describe(proto)} r${proto.revision}`);
  for (const proto of diff.unreadable)
    lines.push(
      `? prototype ${describe(proto)}: could not be read for ${clean(diff.b.archive)}, not known to be removed`,
    );
  for (const proto of diff.changed) {
    const revision =
      proto.fromRevision === proto.revision ? `r${proto.revision}` : `r${proto.fromRevision} -> r${proto.revision}`;
    const renamed = proto.fromName !== undefined ? ` (was ${quote(proto.fromName)})` : '';
    lines.push(
      `~ prototype ${describe(proto)}${renamed} ${revision}${proto.incomplete ? ' (an archive lacks part of it)' : ''}`,
    );
    lines.push(`    ${countsText(proto)}`);
    const width = Math.max(...CATEGORIES.map((c) => c.length));
    for (const category of CATEGORIES) {
      const items = itemsOf(proto.changes[category]);
      if (items.length > 0) lines.push(`    ${category.padEnd(width)}  ${items}`);
    }
  }
  const total = diff.added.length + diff.removed.length + diff.changed.length + diff.unreadable.length;
  if (total > 0) lines.push('');
  lines.push(
    `${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed, ${diff.unchanged} unchanged` +
      (diff.unreadable.length > 0 ? `, ${diff.unreadable.length} unreadable` : ''),
  );
  return lines.join('\n');
}

/** `pages: 1 changed; elements: 2 added, 1 removed`: what changed, by kind, before the names. */
export function countsText(proto: PrototypeChange): string {
  const kinds = CATEGORIES.flatMap((category) => {
    const count = proto.counts[category];
    if (count === undefined) return [];
    const parts = (['added', 'removed', 'changed'] as const).filter((kind) => count[kind] > 0);
    return [`${category}: ${parts.map((kind) => `${count[kind]} ${kind}`).join(', ')}`];
  });
  return kinds.length > 0 ? kinds.join('; ') : 'no file changed: only the name or revision in the manifest';
}

function itemsOf(changes: Record<'added' | 'removed' | 'changed', string[]>): string {
  const marked = [
    ...changes.added.map((id) => `+${id}`),
    ...changes.removed.map((id) => `-${id}`),
    ...changes.changed.map((id) => `~${id}`),
  ];
  const shown = marked.slice(0, MAX_ITEMS).map(clean).join(' ');
  return marked.length > MAX_ITEMS ? `${shown} ... and ${marked.length - MAX_ITEMS} more` : shown;
}

function describe(proto: DiffedPrototype): string {
  return proto.name === null ? proto.id : `${proto.id} ${quote(proto.name)}`;
}

function quote(name: string | null): string {
  return name === null ? '(no name)' : `"${clean(name)}"`;
}
