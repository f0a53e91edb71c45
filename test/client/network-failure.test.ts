import { describe, expect, it } from 'vitest';
import { isPlainAnswerToTls, isTlsAnswerToHttp, wrongScheme } from '../../src/client/network-failure.js';
import { withScheme } from '../../src/client/base-url.js';

const coded = (code: string | undefined, message = 'x', extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error(message), code === undefined ? {} : { code }, extra);
const wrapped = (cause: Error): Error => new Error('fetch failed', { cause });

describe('what a failed connection was, from the error alone', () => {
  it.each([
    ['wrong version number', coded('ERR_SSL_WRONG_VERSION_NUMBER'), true],
    ['packet length too long', coded('ERR_SSL_PACKET_LENGTH_TOO_LONG'), true],
    ['down the cause chain', wrapped(coded('ERR_SSL_WRONG_VERSION_NUMBER')), true],
    ['an untrusted certificate', coded('DEPTH_ZERO_SELF_SIGNED_CERT'), false],
    ['a refusal', coded('ECONNREFUSED'), false],
  ])('a TLS handshake answered in plain HTTP: %s -> %s', (_name, error, expected) => {
    expect(isPlainAnswerToTls(error)).toBe(expected);
  });

  const parserError = (data: string | undefined): Error =>
    Object.assign(new Error('Response does not match the HTTP/1.1 protocol'), { name: 'HTTPParserError', data });
  it.each([
    ['a TLS alert', parserError('\u0015\u0003\u0003\u0000\u0002\u0002F'), true],
    ['a TLS handshake record', parserError('\u0016\u0003\u0001\u0000'), true],
    ['with the parser code set', coded('HPE_INVALID_CONSTANT', 'x', { data: '\u0015\u0003\u0001' }), true],
    ['down the cause chain', wrapped(parserError('\u0015\u0003\u0003')), true],
    ['other garbage', parserError('SSH-2.0-OpenSSH_9.2\r\n'), false],
    ['no bytes kept', parserError(undefined), false],
    ['not a parser error', coded('ECONNRESET', 'x', { data: '\u0015\u0003\u0003' }), false],
  ])('an HTTP request answered with a TLS record: %s -> %s', (_name, error, expected) => {
    expect(isTlsAnswerToHttp(error)).toBe(expected);
  });
});

describe('the URL suggested for the scheme that port speaks', () => {
  const request = { method: 'GET', source: '/rabbit/api/prototypes.json' };
  it.each([
    ['https://127.0.0.1:8080', '', 'http://127.0.0.1:8080', undefined],
    ['https://rabbit.example', '/team', 'http://rabbit.example:443/team', 'yes'],
    ['https://rabbit.example:80', '', 'http://rabbit.example', 'yes'],
    ['http://127.0.0.1:8443', '', 'https://127.0.0.1:8443', undefined],
    ['http://localhost', '', 'https://localhost:80', undefined],
    ['http://[::1]:443', '', 'https://[::1]', undefined],
  ])('%s%s -> %s', (origin, basePath, suggestion, insecure) => {
    const error = wrongScheme(undefined, { origin: new URL(origin), basePath }, request);
    expect(error.code).toBe('WRONG_SCHEME');
    expect(error.errorClass).toBe('fatal');
    expect(error.data?.['suggestion']).toBe(suggestion);
    expect(error.data?.['insecure']).toBe(insecure);
  });

  it('names the proxy by host:port, never with its credentials, and which variable holds it', () => {
    const error = wrongScheme(
      undefined,
      { origin: new URL('https://rabbit.example'), basePath: '', proxy: new URL('https://bob:s3cret@proxy.corp:3128') },
      request,
      true,
    );
    expect(error.message).toContain('the proxy proxy.corp:3128 answers in plain HTTP');
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toMatch(/bob|s3cret/);
    expect(error.data).toMatchObject({ target: 'proxy', variable: 'HTTPS_PROXY' });
  });

  it.each([
    ['127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['127.1.2.3:8080/base', 'http://127.1.2.3:8080/base'],
    ['LOCALHOST:3000', 'http://LOCALHOST:3000'],
    ['[::1]:3000', 'http://[::1]:3000'],
    ['rabbit.example:8443', 'https://rabbit.example:8443'],
    ['localhost.example:80', 'https://localhost.example:80'],
    ['10.0.0.5:8080', 'https://10.0.0.5:8080'],
  ])('a base URL without a scheme: %s -> %s', (written, expected) => {
    expect(withScheme(written)).toBe(expected);
  });
});
