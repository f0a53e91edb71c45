import { Lru } from './lru.js';
import type { DatasetOptions, PageRecord, PrototypeHead, PrototypeRecord } from './model.js';
import type { PrototypePlan } from './ordinary-prototype.js';
import {
  materialize,
  planElementIds,
  planOrdinaryPrototype,
  planPage,
  planPageIds,
  planPageIndex,
} from './ordinary-prototype.js';
import { FIRST_ORDINARY_ID } from './sample-data.js';

// Plans hold a prototype's head and one number per page; pages are regenerated when evicted.
const PLAN_CACHE = 256;
const PAGE_CACHE = 128;

/**
 * The ordinary prototypes nobody has written to, served from their plans: any of them, any page,
 * at any time, with only the recently used ones held.
 */
export class PlannedPrototypes {
  private readonly plans = new Lru<string, PrototypePlan>(PLAN_CACHE);
  private readonly pages = new Lru<string, PageRecord>(PAGE_CACHE);

  constructor(
    private readonly seed: number,
    private readonly dataset: Readonly<DatasetOptions>,
    private readonly firstDiscussionId: number,
  ) {}

  /** Discussion ids run on across the ordinary prototypes; one without pages has none. */
  get discussionsEach(): number {
    return this.dataset.pagesPerPrototype > 0 ? this.dataset.discussionsPerPrototype : 0;
  }

  head(id: string): PrototypeHead {
    return this.plan(id).head;
  }

  pageIds(id: string): string[] {
    return planPageIds(this.plan(id));
  }

  page(id: string, pageId: string): PageRecord | undefined {
    const index = planPageIndex(this.plan(id), pageId);
    if (index === undefined) return undefined;
    const key = `${id}/${pageId}`;
    let page = this.pages.get(key);
    if (page === undefined) this.pages.set(key, (page = planPage(this.plan(id), index)));
    return page;
  }

  /** Element ids of a page without generating it. */
  elementIds(id: string, pageId: string): string[] | undefined {
    const plan = this.plan(id);
    const index = planPageIndex(plan, pageId);
    return index === undefined ? undefined : planElementIds(plan, index);
  }

  elementCount(id: string, pageId: string): number | undefined {
    const plan = this.plan(id);
    return planPageIndex(plan, pageId) === undefined ? undefined : plan.elementsPerPage;
  }

  /** The prototype in full, handed over for good: the caller keeps it from now on. */
  build(id: string): PrototypeRecord {
    const built = materialize(this.plan(id));
    this.plans.delete(id);
    this.pages.deleteWhere((key) => key.startsWith(`${id}/`));
    return built;
  }

  private plan(id: string): PrototypePlan {
    let plan = this.plans.get(id);
    if (plan === undefined) {
      const firstDiscussion = this.firstDiscussionId + (Number(id) - FIRST_ORDINARY_ID) * this.discussionsEach;
      plan = planOrdinaryPrototype(this.seed, Number(id), this.dataset, firstDiscussion);
      this.plans.set(id, plan);
    }
    return plan;
  }
}
