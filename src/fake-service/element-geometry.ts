import type { ElementRecord, LayerRecord, PageRecord, PrototypeHead } from './model.js';

/**
 * Where an element sits, read defensively: attributes arrive from PUT and POST bodies, so
 * position and dimensions may be missing or hold anything.
 */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function boxOf(element: ElementRecord): Box {
  const position = asRecord(element.position);
  const dimensions = asRecord(element.dimensions);
  return {
    x: finite(position.x, 0),
    y: finite(position.y, 0),
    width: Math.max(0, finite(dimensions.width, 40)),
    height: Math.max(0, finite(dimensions.height, 20)),
  };
}

/** Elements drawn on a page: its visible layers first (underneath), then its own. */
export function visibleElements(proto: PrototypeHead, page: PageRecord): ElementRecord[] {
  const layers = page.layers
    .map((id) => proto.layers.find((layer) => layer.id === id))
    .filter((layer): layer is LayerRecord => layer !== undefined);
  return [...layers.flatMap((layer) => layer.elements), ...page.elements];
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function finite(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
