import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RabbitError, isRabbitError } from '../../src/core/errors.js';
import { statusError } from '../../src/client/http-client.js';
import { manifestErrorOf } from '../../src/manifest/manifest-error.js';
import { checkRecorded, readVerified } from '../../src/storage/read-verified.js';
import { cachedBodyOf, storedFileOf } from '../../src/storage/stored-file.js';

describe('RabbitError fields', () => {
  it('keeps the source a path: a query string (and any key in it) is cut off', () => {
    const error = new RabbitError('HTTP_STATUS', 'GET /x answered 500', { source: '/assets/a.css?v=2&api_key=secret' });
    expect(error.source).toBe('/assets/a.css');
  });

  it('carries the attempts the fetch loop made, set once by after()', () => {
    const error = new RabbitError('TIMEOUT', 'timed out');
    expect(error.attempts).toBeUndefined();
    expect(error.after(4)).toBe(error);
    expect(error.attempts).toBe(4);
  });

  it.each([
    { status: 503, retryAfterMs: 2000, errorClass: 'retryable' },
    { status: 429, retryAfterMs: undefined, errorClass: 'retryable' },
    { status: 404, retryAfterMs: undefined, errorClass: 'resource' },
  ])('statusError $status carries status, class and the parsed Retry-After', ({ status, retryAfterMs, errorClass }) => {
    const error = statusError('GET', '/api/v1/prototypes.json', status, retryAfterMs);
    expect(error.status).toBe(status);
    expect(error.errorClass).toBe(errorClass);
    expect(error.retryAfterMs).toBe(retryAfterMs);
  });
});

describe('manifestErrorOf', () => {
  it('records status, id and attempts as fields and the message without query strings', () => {
    const error = new RabbitError('HTTP_STATUS', 'GET /assets/a.css?v=2 answered 500', { status: 500, id: '7' }).after(
      3,
    );
    expect(manifestErrorOf('/assets/a.css', error)).toEqual({
      source: '/assets/a.css',
      code: 'HTTP_STATUS',
      message: 'GET /assets/a.css answered 500',
      status: 500,
      id: '7',
      attempts: 3,
    });
  });

  it('leaves out what the error does not have', () => {
    expect(manifestErrorOf('/api/v1/x.json', new RabbitError('DEADLINE', 'cut off'))).toEqual({
      source: '/api/v1/x.json',
      code: 'DEADLINE',
      message: 'cut off',
    });
  });
});

describe('readVerified', () => {
  const data = Buffer.from('hello');
  const recorded = { size: data.length, sha256: createHash('sha256').update(data).digest('hex') };

  it('returns the bytes that match their record', async () => {
    await expect(readVerified(Promise.resolve(data), recorded, 'damaged')).resolves.toEqual(data);
  });

  it.each([
    { label: 'other bytes', bytes: Buffer.from('hellO') },
    { label: 'fewer bytes', bytes: Buffer.from('hell') },
  ])('refuses $label with ARCHIVE_CORRUPT', async ({ bytes }) => {
    const error = await readVerified(Promise.resolve(bytes), recorded, 'damaged', { source: '/s' }).catch(
      (e: unknown) => e,
    );
    expect(isRabbitError(error, 'ARCHIVE_CORRUPT')).toBe(true);
    expect(isRabbitError(error) ? error.source : undefined).toBe('/s');
  });

  it('checks a copy already hashed as it was written', () => {
    expect(() => checkRecorded({ ...recorded, sha256: '0'.repeat(64) }, recorded, 'damaged')).toThrow(
      expect.objectContaining({ code: 'ARCHIVE_CORRUPT' }),
    );
  });
});

describe('storedFileOf', () => {
  const body = { sha256: 'ab'.repeat(32), size: 5, file: 'pack', offset: 10, buffer: Buffer.from('hello') };

  it('copies where the body lies and how it was served, never the spool buffer', () => {
    const cached = cachedBodyOf(body, { contentType: 'text/css', lastModified: null });
    expect(cached).toEqual({
      sha256: body.sha256,
      size: 5,
      file: 'pack',
      offset: 10,
      contentType: 'text/css',
      lastModified: null,
    });
    expect(storedFileOf({ path: 'assets/x.css', source: '/x.css' }, cached)).toEqual({
      path: 'assets/x.css',
      source: '/x.css',
      ...cached,
    });
  });

  it('keeps generatedFrom and data only when given', () => {
    const { offset: _offset, ...inOwnFile } = body;
    const cached = cachedBodyOf(inOwnFile, { contentType: 'text/html', lastModified: 'then' });
    const file = storedFileOf(
      { path: 'index.html', source: 'generated', generatedFrom: 'manifest.json' },
      { ...cached, data: body.buffer },
    );
    expect(file).toEqual({
      path: 'index.html',
      source: 'generated',
      ...cached,
      generatedFrom: 'manifest.json',
      data: body.buffer,
    });
    expect('offset' in file).toBe(false);
  });
});
