import { describe, expect, it } from 'vitest';
import { parseJson, parsePrototype, readIdList } from '../../src/api/parse.js';
import { isRabbitError } from '../../src/core/errors.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const withBom = (text: string): Buffer => Buffer.concat([BOM, Buffer.from(text, 'utf8')]);
const SOURCE = '/rabbit/api/prototypes.json';

describe('a UTF-8 byte-order mark before a JSON body', () => {
  it('is skipped by the id lists, big integer ids keeping every digit (lossless-json)', () => {
    expect(readIdList(withBom('[9007199254740993, 3]'), 'prototype', SOURCE)).toEqual({
      ids: ['9007199254740993', '3'],
      rejected: [],
    });
    expect(readIdList(withBom('["page1", "page2"]'), 'page', SOURCE).ids).toEqual(['page1', 'page2']);
    expect(readIdList(withBom('{"page1": "Home"}'), 'page', SOURCE, true).ids).toEqual(['page1']);
  });

  it('is skipped by the metadata reader', () => {
    const value = parseJson(withBom('{"prototypeData": {"name": "Café", "lastModification": 5}}'), SOURCE);
    expect(parsePrototype(value, SOURCE)).toMatchObject({ name: 'Café', lastModification: 5 });
  });

  it.each([
    ['a mark alone', BOM],
    ['two marks', withBom('\ufeff[1]')],
    ['a mark in UTF-16', Buffer.from([0xfe, 0xff, 0x00, 0x5b, 0x00, 0x5d])],
    ['half a mark', Buffer.concat([BOM.subarray(0, 2), Buffer.from('[1]')])],
  ])('is skipped once, and only whole: %s is still not JSON', (_name, body) => {
    let caught: unknown;
    try {
      parseJson(body, SOURCE);
    } catch (error) {
      caught = error;
    }
    expect(isRabbitError(caught, 'BAD_JSON')).toBe(true);
  });
});
