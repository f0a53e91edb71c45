import type { LimitFunction } from 'p-limit';
import { RabbitError } from '../core/errors.js';
import { elementSourcesOf, sourceNameOf } from '../api/entry-paths.js';
import { ownerKindOf } from '../api/ids.js';
import { RESOURCE_KINDS } from '../api/resource-kinds.js';
import { isPlainObject, parseIdList } from '../api/parse.js';
import { bodyProblem } from './element-shape.js';
import type { ParentRef, Skip } from './archived-elements.js';
import type { LiveService } from './live-service.js';
import type { ElementState } from './plan.js';

/**
 * What the service holds now for one prototype: which pages and layers exist, and the elements
 * of one of them. Ids from the service are shape-checked like the exporter's (api/parse.ts)
 * before they are put into a URL.
 */
export class LiveElements {
  constructor(
    private readonly live: LiveService,
    private readonly prototype: string,
    /** The restore's one limit of reads in flight, whose width the session adapts. */
    private readonly limit: LimitFunction,
  ) {}

  /** The sources of a parent's element list and of one element, and the element's bare form for DELETE. */
  paths = {
    list: (parent: string): string => this.sources(parent).list,
    element: (parent: string, id: string): string => this.sources(parent).element(id),
    bare: (parent: string, id: string): string => this.sources(parent).bare(id),
  };

  /** The ids of the live pages or layers. */
  async parentIds(kind: ParentRef['kind']): Promise<Set<string>> {
    const listKind = kind === 'page' ? 'page-list' : 'layer-list';
    const source = sourceNameOf(listKind, { prototype: this.prototype });
    const answer = await this.live.getJson(source, 'list');
    if (answer.status !== 200 || !('value' in answer)) throw unreadable(source, answer.status);
    return new Set(parseIdList(answer.value, kind, source, RESOURCE_KINDS[listKind].objectForm === true).ids);
  }

  /**
   * The elements of a page or layer, except those in `skip`; a Skip when they cannot be read
   * whole (a plan made from half a list could create what is there).
   */
  async elements(parent: string, skip: ReadonlySet<string> = new Set()): Promise<ElementState[] | Skip> {
    const source = this.paths.list(parent);
    const answer = await this.live.getJson(source, 'list');
    if (answer.status === 404)
      return {
        parent,
        reason: `the ${ownerKindOf(parent)} no longer exists; pages and layers cannot be recreated through the API`,
      };
    if (answer.status !== 200 || !('value' in answer))
      return { parent, reason: `its live elements could not be listed (HTTP ${answer.status})` };
    const list = parseIdList(answer.value, 'element', source);
    if (list.rejected.length > 0)
      return {
        parent,
        reason: `the service lists element ids of an unknown shape: ${list.rejected.slice(0, 3).join(', ')}`,
      };
    const read = await Promise.all(
      list.ids.filter((id) => !skip.has(id)).map((id) => this.limit(() => this.element(parent, id))),
    );
    const elements: ElementState[] = [];
    for (const element of read) {
      if (element === undefined) continue;
      if ('reason' in element) return element;
      elements.push(element);
    }
    return elements;
  }

  /** Undefined for an element deleted since the list was read. */
  private async element(parent: string, id: string): Promise<ElementState | Skip | undefined> {
    const source = this.paths.element(parent, id);
    const answer = await this.live.getJson(source, 'element');
    if (answer.status === 404) return undefined;
    if (answer.status !== 200 || !('value' in answer))
      return { parent, element: id, reason: `the live element could not be read (HTTP ${answer.status})` };
    if (!isPlainObject(answer.value)) return { parent, element: id, reason: 'the live element is not a JSON object' };
    // The plan compares it attribute by attribute (canonical JSON, recursive): a depth it cannot walk is refused first.
    const problem = bodyProblem(answer.value);
    if (problem !== undefined) return { parent, element: id, reason: `the live element: ${problem}` };
    const attributes = Object.fromEntries(Object.entries(answer.value).filter(([name]) => name !== 'id'));
    return { id, attributes };
  }

  private sources(parent: string): ReturnType<typeof elementSourcesOf> {
    return elementSourcesOf(this.prototype, ownerKindOf(parent), parent);
  }
}

function unreadable(source: string, status: number): RabbitError {
  return new RabbitError('HTTP_STATUS', `GET ${source} answered ${status}`, {
    source,
    method: 'GET',
    status,
    errorClass: 'fatal',
  });
}
