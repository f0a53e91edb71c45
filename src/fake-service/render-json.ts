import type { DiscussionRecord, ElementRecord, LayerRecord, PageRecord, PrototypeHead } from './model.js';

/**
 * JSON shapes as service-api.md section 2 and api-notes.md describe them, field order included,
 * so bodies look like the ones the live service sent.
 */
export function prototypeJson(proto: PrototypeHead): unknown {
  return {
    id: proto.id,
    versions: { milestones: proto.milestones },
    prototypeData: {
      lastModification: proto.lastModification,
      id: proto.id,
      lastUser: proto.lastUser,
      name: proto.name,
    },
  };
}

/** The old API answered with `{"page2200": "MyPage 3"}`; the documented one with an id array. */
export function pagesListJson(proto: PrototypeHead, pageIds: string[], nameOf: (pageId: string) => string): unknown {
  if (!proto.legacyPagesList) return pageIds;
  return Object.fromEntries(pageIds.map((id) => [id, nameOf(id)]));
}

export function pageJson(page: PageRecord): unknown {
  return { id: page.id, layers: page.layers, name: page.name };
}

export function layerJson(layer: LayerRecord): unknown {
  return { id: layer.id, name: layer.name };
}

export function elementIdsJson(elements: readonly ElementRecord[]): unknown {
  return elements.map((element) => element.id);
}

export function discussionIdsJson(discussions: readonly DiscussionRecord[], pageId?: string): unknown {
  return discussions.filter((d) => pageId === undefined || d.pageId === pageId).map((d) => d.id);
}

export function discussionJson(proto: PrototypeHead, discussion: DiscussionRecord): unknown {
  const last = discussion.entries[discussion.entries.length - 1];
  return {
    id: discussion.id,
    prototypeId: proto.id,
    pageId: discussion.pageId,
    title: discussion.title,
    positionX: discussion.positionX,
    positionY: discussion.positionY,
    timestamp: discussion.timestamp,
    entries: discussion.entries,
    readAt: discussion.readAt,
    lastEntryDate: last?.timestamp ?? discussion.timestamp,
    // Undocumented, but the live service sent it (api-notes.md).
    deleted: -1,
  };
}
