import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { toNetworkError } from '../../src/client/http-client.js';
import { outageSignalOf } from '../../src/client/outage-policy.js';
import { proxyAddress, proxyFailureOf, proxyNoteOf, type ProxyFailure } from '../../src/client/proxy-failure.js';
import { RabbitError } from '../../src/core/errors.js';

const PROXY = new URL('http://alice:s3cret@proxy.corp.example:3128');

/** A socket error as Node makes it: the code in the message and on the object. */
const system = (code: string, message: string): Error => Object.assign(new Error(message), { code });

// Modelled on what undici hands back for each (see test/cli/error-guide.test.ts for the real ones).
const CONNECT_407 = new errors.RequestAbortedError('Proxy response (407) !== 200 when HTTP Tunneling');

describe('whose fault a failure through a proxy is', () => {
  it.each<[string, Error, Pick<ProxyFailure, 'trouble' | 'status'> | undefined]>([
    ['refused', system('ECONNREFUSED', 'connect ECONNREFUSED 10.1.2.3:3128'), { trouble: 'refused' }],
    ['name unknown', system('ENOTFOUND', 'getaddrinfo ENOTFOUND proxy.corp.example'), { trouble: 'not-found' }],
    ['name not answered', system('EAI_AGAIN', 'getaddrinfo EAI_AGAIN proxy.corp.example'), { trouble: 'not-found' }],
    ['no route', system('EHOSTUNREACH', 'connect EHOSTUNREACH 10.1.2.3:3128'), { trouble: 'unreachable' }],
    ['407 to CONNECT', CONNECT_407, { trouble: 'status', status: 407 }],
    [
      '502 to CONNECT, deeper in the chain',
      new Error('wrapped', {
        cause: new errors.RequestAbortedError('Proxy response (502) !== 200 when HTTP Tunneling'),
      }),
      { trouble: 'status', status: 502 },
    ],
    // Inside the tunnel: the service's as much as the proxy's, so not said to be the proxy's.
    ['connection cut', new errors.SocketError('other side closed'), undefined],
    ['reset', system('ECONNRESET', 'read ECONNRESET'), undefined],
    ['headers timeout', new errors.HeadersTimeoutError(), undefined],
  ])('%s', (_name, error, expected) => {
    const failure = proxyFailureOf(error, PROXY);
    expect(failure).toEqual(
      expected === undefined ? undefined : { proxy: 'proxy.corp.example:3128', withCredentials: true, ...expected },
    );
  });

  it.each([
    ['http://proxy.corp.example:3128', 'proxy.corp.example:3128'],
    ['http://bob:pw@proxy.corp.example', 'proxy.corp.example:80'],
    ['https://proxy.corp.example', 'proxy.corp.example:443'],
    ['http://[::1]:8080', '[::1]:8080'],
  ])('names %s as %s', (url, address) => {
    expect(proxyAddress(new URL(url))).toBe(address);
  });

  it('a request error through a proxy names it by host:port, stays a retryable transport failure, and holds no credentials', () => {
    const refused = toNetworkError(
      system('ECONNREFUSED', 'connect ECONNREFUSED 10.1.2.3:3128'),
      '/x',
      undefined,
      'GET',
      PROXY,
    );
    expect(refused.code).toBe('NETWORK');
    expect(refused.errorClass).toBe('retryable');
    expect(outageSignalOf(refused)).toBe('transport');
    expect(refused.message).toBe(
      'GET /x failed: the proxy proxy.corp.example:3128 refused the connection: nothing listens there',
    );
    expect(proxyNoteOf(refused)).toEqual({
      proxy: 'proxy.corp.example:3128',
      failure: { proxy: 'proxy.corp.example:3128', trouble: 'refused', withCredentials: true },
    });

    const auth = toNetworkError(CONNECT_407, '/x', undefined, 'GET', new URL('http://proxy.corp.example:3128'));
    expect(auth.message).toContain('answered 407 to CONNECT: it asks for credentials, and its URL has none');

    const cut = toNetworkError(new errors.SocketError('other side closed'), '/x', undefined, 'GET', PROXY);
    expect(cut.message).toBe(
      'GET /x failed through the proxy proxy.corp.example:3128: UND_ERR_SOCKET other side closed',
    );
    expect(proxyNoteOf(cut)).toEqual({ proxy: 'proxy.corp.example:3128' });

    const slow = toNetworkError(new errors.HeadersTimeoutError(), '/x', undefined, 'GET', PROXY);
    expect(slow.code).toBe('TIMEOUT');
    expect(proxyNoteOf(slow)).toEqual({ proxy: 'proxy.corp.example:3128' });

    for (const error of [refused, auth, cut, slow]) {
      expect(`${error.message} ${JSON.stringify(error.data)}`).not.toMatch(/alice|s3cret/);
    }
  });

  it('says nothing of a proxy for a direct request, or for data it did not write', () => {
    const direct = toNetworkError(system('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), '/x');
    expect(direct.message).toBe('GET /x failed: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9');
    expect(proxyNoteOf(direct)).toBeUndefined();
    const odd = new RabbitError('NETWORK', 'x', { data: { proxy: 'p:1', proxyFailure: { trouble: 'gone' } } });
    expect(proxyNoteOf(odd)).toEqual({ proxy: 'p:1' });
  });
});
