import { describe, expect, it } from 'vitest';
import { readIdList } from '../../src/api/parse.js';
import { integerDigits } from '../../src/api/ids.js';
import { isRabbitError } from '../../src/core/errors.js';

const list = (text: string, kind: Parameters<typeof readIdList>[1] = 'discussion', objectForm = false) =>
  readIdList(Buffer.from(text, 'utf8'), kind, '/rabbit/api/x.json', objectForm);

describe('integerDigits: the integer a JSON number denotes, from its text', () => {
  it.each([
    ['9007199254740993', '9007199254740993'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
    ['0', '0'],
    ['-0', '0'],
    ['12.0', '12'],
    ['1.2e1', '12'],
    ['1e3', '1000'],
    ['1E+3', '1000'],
    ['9007199254740993.000', '9007199254740993'],
    ['120e-1', '12'],
    ['0.0e5', '0'],
  ])('%s -> %s', (text, digits) => expect(integerDigits(text)).toBe(digits));

  it.each(['-1', '1.5', '1e-1', '1.00000000000000001', '1e30', '1e999999999', '-9007199254740993', 'x', ''])(
    '%s is not a non-negative integer of at most 30 digits',
    (text) => expect(integerDigits(text)).toBeUndefined(),
  );
});

describe('readIdList keeps integer ids as the service wrote them', () => {
  it('past 2^53: every digit, where JSON.parse would read a neighbour', () => {
    expect(JSON.parse('[9007199254740993]')).toEqual([9007199254740992]);
    expect(list('[9007199254740993, 9007199254740995, 3]')).toEqual({
      ids: ['9007199254740993', '9007199254740995', '3'],
      rejected: [],
    });
    expect(list('[1001, 9007199254740993]', 'prototype').ids).toEqual(['1001', '9007199254740993']);
  });

  it('other spellings of an integer are that integer; negatives and fractions are rejected as written', () => {
    expect(list('[12.0, 1e3, -0, -1, 1.5, "77", "007", 1e31]')).toEqual({
      ids: ['12', '1000', '0', '77', '007'],
      rejected: ['-1', '1.5', '1e31'],
    });
  });

  it('duplicates by digits are dropped, neighbours past 2^53 are not', () => {
    expect(list('[9007199254740993, 9007199254740992, 9007199254740993]').ids).toEqual([
      '9007199254740993',
      '9007199254740992',
    ]);
  });

  it('string-id lists take the fast path and keep their shapes (the old object form too)', () => {
    expect(list('["page0001","page10"]', 'page').ids).toEqual(['page0001', 'page10']);
    expect(list('{"page2200":"MyPage 3","page15":"x"}', 'page', true).ids).toEqual(['page2200', 'page15']);
    expect(list('["element1", 5]', 'element')).toEqual({ ids: ['element1'], rejected: ['5'] });
  });

  it('a list lossless-json refuses (a duplicate key in an item) is still read as JSON.parse reads it', () => {
    expect(list('[5, {"a":1,"a":2}]')).toEqual({ ids: ['5'], rejected: ['{"a":2}'] });
  });

  it('a body that is not JSON, or not a list, is BAD_JSON or BAD_SHAPE', () => {
    for (const [text, code] of [
      ['[1,', 'BAD_JSON'],
      ['{"a":1}', 'BAD_SHAPE'],
    ] as const) {
      let caught: unknown;
      try {
        list(text);
      } catch (error) {
        caught = error;
      }
      expect(isRabbitError(caught, code), text).toBe(true);
    }
  });
});
