import type {
  DatasetOptions,
  ElementRecord,
  LayerRecord,
  PageRecord,
  PrototypeHead,
  PrototypeRecord,
} from './model.js';
import { SYSTEM_USER } from './model.js';
import type { Rng } from './prng.js';
import { createRng, rngAt } from './prng.js';
import {
  DAY,
  discussion,
  elements,
  emptyPrototype,
  EPOCH,
  hasText,
  milestone,
  milestoneTimes,
  TYPES,
  WORDS,
} from './sample-data.js';

/**
 * The ordinary prototypes that scale with the dataset options. A million-resource account must
 * not be built up front, so a prototype is planned instead: its head (metadata, layers,
 * discussions) plus the generator state at the start of each page, from which any page is
 * regenerated on demand. The random stream is consumed in exactly the order the eager generator
 * used, so the bytes served are the same whichever way a prototype is produced.
 */
export interface PrototypePlan {
  head: PrototypeHead;
  pageCount: number;
  elementsPerPage: number;
  /** Generator state at the start of each page. */
  pageStates: Int32Array;
  /** Id number of the first element of the first page (layers take the ones before). */
  firstPageElement: number;
}

export function planOrdinaryPrototype(
  seed: number,
  id: number,
  options: Readonly<DatasetOptions>,
  firstDiscussionId: number,
): PrototypePlan {
  const rng = createRng(seed, 'prototype', id);
  const proto = emptyPrototype(rng, id, `${rng.pick(WORDS)} prototype ${id}`, rng.pick(['Volker', 'anna@example.com']));
  const times = milestoneTimes(rng, rng.int(1, 4));
  proto.milestones = times.map((t, i) => milestone(i + 1, t, 'autosaved', SYSTEM_USER));
  proto.lastModification = (times[times.length - 1] ?? EPOCH) + rng.int(1000, DAY);
  for (let j = 1; j <= options.layersPerPrototype; j++) {
    proto.layers.push({
      id: `layer${j}`,
      name: `${rng.pick(WORDS)} layer ${j}`,
      elements: elements(rng, proto, options.elementsPerLayer),
    });
  }
  const pageCount = options.pagesPerPrototype;
  const firstPageElement = proto.nextElement;
  const pageStates = new Int32Array(pageCount);
  for (let j = 0; j < pageCount; j++) {
    pageStates[j] = rng.state();
    skipPage(rng, options.elementsPerPage);
    proto.nextElement += options.elementsPerPage;
  }
  const ids = { discussion: firstDiscussionId };
  for (let k = 0; k < options.discussionsPerPrototype && pageCount > 0; k++) {
    const pageId = ordinaryPageId(k % pageCount);
    const authors = ['Volker', 'anna@example.com', 'Jürgen 🐇'].slice(0, rng.int(1, 3));
    proto.discussions.push(discussion(rng, ids, proto, pageId, `${rng.pick(WORDS)} question ${k + 1}`, authors));
  }
  const { pages: _none, ...head } = proto;
  return { head, pageCount, elementsPerPage: options.elementsPerPage, pageStates, firstPageElement };
}

/** Page `index` (0-based) of a planned prototype, as the eager generator made it. */
export function planPage(plan: PrototypePlan, index: number): PageRecord {
  const state = plan.pageStates[index];
  if (state === undefined) throw new RangeError(`no page ${index} in prototype ${plan.head.id}`);
  const counter = { nextElement: plan.firstPageElement + index * plan.elementsPerPage };
  return generatePage(rngAt(state), counter, plan.head.layers, index, plan.pageCount, plan.elementsPerPage);
}

/** The index of an ordinary page id, or undefined for ids no ordinary prototype has. */
export function planPageIndex(plan: PrototypePlan, pageId: string): number | undefined {
  const match = /^page(\d+)$/.exec(pageId);
  if (!match) return undefined;
  const index = Number(match[1]) - 1;
  return index >= 0 && index < plan.pageCount && ordinaryPageId(index) === pageId ? index : undefined;
}

/** Element ids of a planned page, without generating it: they are numbered page after page. */
export function planElementIds(plan: PrototypePlan, index: number): string[] {
  const first = plan.firstPageElement + index * plan.elementsPerPage;
  return Array.from({ length: plan.elementsPerPage }, (_, i) => `element${first + i}`);
}

export function planPageIds(plan: PrototypePlan): string[] {
  return Array.from({ length: plan.pageCount }, (_, j) => ordinaryPageId(j));
}

/** The whole prototype as plain records, for writes: from then on the store keeps it. */
export function materialize(plan: PrototypePlan): PrototypeRecord {
  const pages = Array.from({ length: plan.pageCount }, (_, j) => planPage(plan, j));
  return { ...structuredClone(plan.head), pages };
}

export function ordinaryPageId(index: number): string {
  return `page${String(index + 1).padStart(4, '0')}`;
}

/**
 * Moves the stream past one page exactly as `generatePage` would, without building it: a plan of
 * a 10,000-element prototype then costs numbers, not objects. The golden digests in
 * test/fake-service/lazy-dataset.test.ts fail if the two ever disagree.
 */
function skipPage(rng: Rng, elementCount: number): void {
  rng.next(); // the page's name
  for (let i = 0; i < elementCount; i++) {
    const type = rng.pick(TYPES);
    for (let k = 0; k < 4; k++) rng.next(); // position and dimensions
    if (hasText(type)) rng.next();
  }
}

function generatePage(
  rng: Rng,
  counter: { nextElement: number },
  layers: readonly LayerRecord[],
  j: number,
  pageCount: number,
  elementsPerPage: number,
): PageRecord {
  const name = `${rng.pick(WORDS)} ${j + 1}`;
  const pageElements: ElementRecord[] = elements(rng, counter, elementsPerPage, ordinaryPageId((j + 1) % pageCount));
  return {
    id: ordinaryPageId(j),
    name,
    // The first layer is on every page; the others alternate, so sharing is the normal case.
    layers: layers.filter((_layer, k) => k === 0 || (j + k) % 2 === 0).map((layer) => layer.id),
    elements: pageElements,
  };
}
