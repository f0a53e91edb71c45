import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/core/duration.js';
import { isRabbitError } from '../../src/core/errors.js';
import { isSameService, normalizeServiceUrl } from '../../src/api/service-url.js';

describe('parseDuration (--max-duration)', () => {
  it.each([
    ['90s', 90_000],
    ['45m', 2_700_000],
    ['6h', 21_600_000],
    ['1h30m', 5_400_000],
    ['2d', 172_800_000],
    ['1.5h', 5_400_000],
    ['250ms', 250],
    ['20', 20_000],
    [' 6H ', 21_600_000],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '0', '0s', 's', '-5m', '5 m', '5x', 'h6', '1h-30m', 'six hours', '1e3'])(
    '%j is a usage error',
    (text) => {
      let error: unknown;
      try {
        parseDuration(text);
      } catch (caught) {
        error = caught;
      }
      expect(isRabbitError(error, 'USAGE')).toBe(true);
    },
  );

  it.each([
    [250, '250ms'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [5_400_000, '1h30m'],
    [3 * 86_400_000 + 4 * 3_600_000, '3d4h'],
  ])('%i ms reads %s, and reads back', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });

  it('0 ms reads 0s, which is no duration to give', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(() => parseDuration('0s')).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });
});

describe('isSameService (backup and --since)', () => {
  it.each([
    ['https://Example.com:443/', 'https://example.com', true],
    ['https://example.com/', 'https://example.com', true],
    ['HTTPS://EXAMPLE.COM//', 'https://example.com', true],
    ['http://127.0.0.1:80', 'http://127.0.0.1/', true],
    ['https://example.com/Rabbit/', 'https://example.com/Rabbit', true],
    ['https://example.com:8443', 'https://example.com', false],
    ['http://example.com', 'https://example.com', false],
    ['http://127.0.0.1:4000', 'http://localhost:4000', false],
    ['https://example.com/rabbit', 'https://example.com/Rabbit', false],
    ['https://example.com/a', 'https://example.com', false],
  ])('%s vs %s: %s', (a, b, same) => {
    expect(isSameService(a, b)).toBe(same);
    expect(isSameService(b, a)).toBe(same);
  });

  it('normalizes to scheme, lower-case host, non-default port and the path without trailing slashes', () => {
    expect(normalizeServiceUrl('https://Example.com:443/')).toBe('https://example.com');
    expect(normalizeServiceUrl('http://LOCALHOST:8080/base/')).toBe('http://localhost:8080/base');
    expect(normalizeServiceUrl('not a url/')).toBe('not a url');
  });
});
