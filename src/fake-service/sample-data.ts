import type {
  DatasetOptions,
  DiscussionRecord,
  ElementRecord,
  IntegerId,
  MilestoneRecord,
  PageRecord,
  PrototypeRecord,
} from './model.js';
import { newPrototype, SYSTEM_USER } from './model.js';
import type { Rng } from './prng.js';
import { createRng } from './prng.js';

/**
 * The sample account. Three fixed prototypes carry the awkward cases an exporter must survive
 * (see the report in each builder); the ordinary ones scale with the dataset options for
 * benchmarks and are generated from the same helpers, a page at a time (ordinary-prototype.ts). Structure is fixed; positions, timestamps and ordinary names come from the seed.
 */
export const AWKWARD_IDS = { main: 3, noMilestones: 17, legacy: 42 } as const;
/**
 * The prototype of the bigIds option and its discussions: 2^53 + 1, + 3 and + 5, each of which
 * JSON.parse reads as a neighbour (9007199254740992, ...994, ...996).
 */
export const BIG_IDS = {
  prototype: 9007199254740993n,
  discussions: [9007199254740993n, 9007199254740995n, 9007199254740997n],
} as const;
export const FIRST_ORDINARY_ID = 1001;

// 2010-01-01: every sample timestamp lies well before any clock a test would pass for writes.
export const EPOCH = 1262304000000;
export const DAY = 86_400_000;
const VOLKER = { id: 17, name: 'Volker' };
export const TYPES = ['button', 'text', 'image', 'link', 'rectangle', 'checkbox', 'headline'] as const;
export const WORDS = ['Login', 'Dashboard', 'Settings', 'Profile', 'Search', 'Report', 'Inbox', 'Help'];

export interface AwkwardData {
  prototypes: PrototypeRecord[];
  nextDiscussionId: number;
}

/** The fixed prototypes; the ordinary ones are generated lazily (ordinary-prototype.ts). */
export function buildAwkwardPrototypes(seed: number, options: DatasetOptions): AwkwardData {
  const ids = { discussion: 1 };
  const prototypes = [mainPrototype(seed, ids), noMilestonesPrototype(seed, ids)];
  if (options.legacyPagesList) prototypes.push(legacyPrototype(seed));
  if (options.bigIds) prototypes.push(bigIdsPrototype(seed));
  return { prototypes, nextDiscussionId: ids.discussion };
}

/** Unsorted milestones, ids with leading zeros, a shared layer, an empty page and layer, markup. */
function mainPrototype(seed: number, ids: { discussion: number }): PrototypeRecord {
  const rng = createRng(seed, 'prototype', AWKWARD_IDS.main);
  const proto = emptyPrototype(rng, AWKWARD_IDS.main, 'foo type', 'Volker');
  const times = milestoneTimes(rng, 6);
  const named: Record<number, [string, { id: number; name: string }]> = {
    3: ['Review “draft” <v3> & notes', VOLKER],
    6: ['Ready ✓ shipped 🚀', VOLKER],
  };
  proto.milestones = [1, 5, 4, 2, 3, 6].map((revision) => {
    const [name, user] = named[revision] ?? ['autosaved', SYSTEM_USER];
    return milestone(revision, times[revision - 1] ?? EPOCH, name, user);
  });
  proto.lastModification = (times[5] ?? EPOCH) + rng.int(1000, DAY);
  proto.layers = [
    { id: 'layer1', name: 'Header 🎩 <nav> & "menu"', elements: elements(rng, proto, 2) },
    { id: 'layer22', name: 'Empty layer', elements: [] },
  ];
  proto.pages = [
    { id: 'page0001', name: 'Start – Übersicht 🏠', layers: ['layer1'], elements: [] },
    { id: 'page7830', name: `<b>Checkout</b> & "Pay" 'now'`, layers: ['layer1', 'layer22'], elements: [] },
    { id: 'page648229105', name: 'Leere Seite (empty)', layers: [], elements: [] },
  ];
  const [start, checkout] = proto.pages as [PageRecord, PageRecord, PageRecord];
  start.elements = elements(rng, proto, 3, checkout.id);
  checkout.elements = elements(rng, proto, 2, start.id);
  proto.discussions = [
    discussion(rng, ids, proto, start.id, 'Logo too small?', ['Jürgen 🐇', 'Volker', 'anna@example.com']),
    discussion(rng, ids, proto, checkout.id, 'Use <strong> & "quotes"', ['Volker', 'Jürgen 🐇']),
    discussion(rng, ids, proto, start.id, 'Ünïcödé ✓', ['anna@example.com']),
  ];
  return proto;
}

/** A prototype that was never saved as a milestone: its revision list is empty. */
function noMilestonesPrototype(seed: number, ids: { discussion: number }): PrototypeRecord {
  const rng = createRng(seed, 'prototype', AWKWARD_IDS.noMilestones);
  const proto = emptyPrototype(
    rng,
    AWKWARD_IDS.noMilestones,
    'Shop 🛒 <i>beta</i> & "friends" – 日本語',
    'anna@example.com',
  );
  proto.layers = [{ id: 'layer5', name: 'Footer', elements: elements(rng, proto, 1) }];
  proto.pages = [
    { id: 'page1', name: 'Home', layers: ['layer5'], elements: elements(rng, proto, 2, 'page10') },
    { id: 'page0002', name: 'Cart 🛒', layers: ['layer5'], elements: elements(rng, proto, 1) },
    { id: 'page10', name: 'Terms & Conditions <draft>', layers: ['layer5'], elements: elements(rng, proto, 1) },
  ];
  proto.discussions = [discussion(rng, ids, proto, 'page10', 'Legal review', ['anna@example.com', 'Volker'])];
  return proto;
}

/** Served with the old API's object-form pages.json; it also has no layers and no discussions. */
function legacyPrototype(seed: number): PrototypeRecord {
  const rng = createRng(seed, 'prototype', AWKWARD_IDS.legacy);
  const proto = emptyPrototype(rng, AWKWARD_IDS.legacy, 'Alt-API Prototyp ✨', 'Volker');
  const times = milestoneTimes(rng, 2);
  proto.milestones = times.map((t, i) => milestone(i + 1, t, 'autosaved', SYSTEM_USER));
  proto.legacyPagesList = true;
  proto.pages = [
    { id: 'page2200', name: 'MyPage 3', layers: [], elements: elements(rng, proto, 2) },
    { id: 'page15', name: 'Kontakt & Impressum', layers: [], elements: elements(rng, proto, 1, 'page2200') },
  ];
  return proto;
}

/** Ids past 2^53: the prototype's own and its discussions' (BIG_IDS), on two pages. */
function bigIdsPrototype(seed: number): PrototypeRecord {
  const rng = createRng(seed, 'prototype', 'big');
  const proto = emptyPrototype(rng, BIG_IDS.prototype, 'Past 2^53', 'Volker');
  proto.milestones = milestoneTimes(rng, 1).map((t) => milestone(1, t, 'autosaved', SYSTEM_USER));
  proto.pages = [
    { id: 'page1', name: 'Big ids', layers: [], elements: elements(rng, proto, 2, 'page2') },
    { id: 'page2', name: 'More big ids', layers: [], elements: elements(rng, proto, 1) },
  ];
  const titles = ['First past 2^53', 'Second past 2^53', 'Third past 2^53'];
  proto.discussions = BIG_IDS.discussions.map((id, k) => ({
    ...discussion(rng, { discussion: 0 }, proto, k === 1 ? 'page2' : 'page1', titles[k] ?? '', ['Volker']),
    id,
  }));
  return proto;
}

export function emptyPrototype(rng: Rng, id: IntegerId, name: string, lastUser: string): PrototypeRecord {
  return newPrototype(id, name, lastUser, EPOCH + rng.int(0, 900) * DAY + rng.int(0, DAY));
}

/** Creation times in ascending revision order, the last one a while before lastModification. */
export function milestoneTimes(rng: Rng, count: number): number[] {
  let t = EPOCH + rng.int(0, 400) * DAY;
  return Array.from({ length: count }, () => (t += rng.int(3_600_000, 30 * DAY)));
}

export function milestone(
  revision: number,
  created: number,
  name: string,
  user: { id: number; name: string },
): MilestoneRecord {
  return { revision, created: String(created), name, user: { id: user.id, name: user.name } };
}

export function elements(rng: Rng, proto: { nextElement: number }, count: number, target?: string): ElementRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const type = rng.pick(TYPES);
    const element: ElementRecord = {
      id: `element${proto.nextElement++}`,
      type,
      position: { x: rng.int(0, 260), y: rng.int(0, 200) },
      dimensions: { width: rng.int(20, 120), height: rng.int(10, 60) },
    };
    if (i === 0 && target !== undefined) element.target = target;
    if (hasText(type)) element.text = `${rng.pick(WORDS)} <${type}> & “${i}”`;
    return element;
  });
}

export function hasText(type: string): boolean {
  return type === 'text' || type === 'button' || type === 'headline';
}

export function discussion(
  rng: Rng,
  ids: { discussion: number },
  proto: { lastModification: number },
  pageId: string,
  title: string,
  authors: string[],
): DiscussionRecord {
  let t = proto.lastModification - rng.int(30, 60) * DAY;
  const entries = authors.map((author, i) => ({
    timestamp: (t += rng.int(60_000, 5 * DAY)),
    author,
    // The service recorded the title being set as the thread's first entry.
    text:
      i === 0
        ? `set the title to "${title}"`
        : `${rng.pick(['Agreed 👍', 'Not sure <yet> & waiting', 'Fixed in r2 ✓'])}`,
  }));
  return {
    id: ids.discussion++,
    pageId,
    title,
    positionX: rng.int(0, 300),
    positionY: rng.int(0, 220),
    timestamp: entries[0]?.timestamp ?? t,
    entries,
    readAt: rng.next() < 0.5 ? 0 : t + rng.int(1000, DAY),
  };
}
