import { describe, expect, it } from 'vitest';
import { BodyPlaces } from '../../src/site/body-places.js';

describe('BodyPlaces', () => {
  it('finds every body by its name past several growths, the later of a name filed twice', () => {
    const places = new BodyPlaces();
    const names = Array.from({ length: 5000 }, (_, i) => `pages/p${i % 50}/elements/e${i}.json`);
    names.push('discussions/1.json', 'pages/ページ.json');
    for (const [i, name] of names.entries()) places.set(name, { file: '/spool/pack', offset: i * 10, size: i });
    places.set('pages/p0/elements/e0.json', { file: '/spool/abc', size: 300_000 });

    expect(places.count).toBe(names.length);
    expect([...places.names()]).toEqual(names);
    expect(places.get('pages/p0/elements/e0.json')).toEqual({ file: '/spool/abc', size: 300_000 });
    expect(places.get('pages/p7/elements/e4007.json')).toEqual({ file: '/spool/pack', offset: 40070, size: 4007 });
    expect(places.get('pages/ページ.json')).toEqual({ file: '/spool/pack', offset: 50010, size: 5001 });
    expect(places.has('discussions/1.json')).toBe(true);
    expect(places.has('discussions/2.json')).toBe(false);
    expect(places.get('pages/p7/elements/e4007.jso')).toBeUndefined();
  });
});
