/**
 * How large a body of each kind the service may send, as decoded (--max-size): a body past its
 * cap is refused, not stored or parsed, whatever the service claims about it.
 */
export interface SizeCaps {
  json: number;
  html: number;
  png: number;
}

export const DEFAULT_SIZE_CAPS: SizeCaps = {
  json: 32 * 1024 * 1024,
  html: 32 * 1024 * 1024,
  png: 256 * 1024 * 1024,
};
