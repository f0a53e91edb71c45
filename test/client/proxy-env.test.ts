import { describe, expect, it } from 'vitest';
import { bypassesProxy, parseProxyUrl, proxyFor, proxySettingsFromEnv } from '../../src/client/proxy-env.js';
import { isLoopbackHost, parseBaseUrl } from '../../src/client/base-url.js';
import { decideRedirect, MAX_REDIRECTS } from '../../src/client/redirects.js';
import { isRabbitError } from '../../src/core/errors.js';
import { redactUrl } from '../../src/core/redact.js';

describe('proxy settings from the environment, as curl reads them', () => {
  it.each([
    [{ HTTPS_PROXY: 'http://p:1' }, { httpsProxy: 'http://p:1' }],
    [{ https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:1' }, { httpsProxy: 'http://low:1' }],
    [{ HTTP_PROXY: 'http://p:1' }, { httpProxy: 'http://p:1' }],
    [
      { http_proxy: 'http://p:1', NO_PROXY: 'a,b' },
      { httpProxy: 'http://p:1', noProxy: 'a,b' },
    ],
    [{ no_proxy: 'x', NO_PROXY: 'y' }, { noProxy: 'x' }],
    [
      { ALL_PROXY: 'http://all:1', HTTPS_PROXY: 'http://s:1' },
      { httpProxy: 'http://all:1', httpsProxy: 'http://s:1' },
    ],
    [{ HTTPS_PROXY: '' }, {}],
    [{}, {}],
  ])('%j -> %j', (env, settings) => {
    expect(proxySettingsFromEnv(env)).toEqual(settings);
  });

  it('uses the proxy of the origin scheme only: HTTP_PROXY alone does not carry https', () => {
    expect(proxyFor(new URL('https://svc.example'), { httpProxy: 'http://p:1' })).toBeUndefined();
    expect(proxyFor(new URL('http://svc.example'), { httpProxy: 'p:3128' })?.href).toBe('http://p:3128/');
    expect(
      proxyFor(new URL('https://svc.example'), { httpsProxy: 'https://p:1', noProxy: '.example' }),
    ).toBeUndefined();
  });

  it.each([
    ['https://api.corp.example', '*', true],
    ['https://api.corp.example', 'corp.example', true],
    ['https://api.corp.example', '.corp.example', true],
    ['https://api.corp.example', '*.corp.example', true],
    ['https://notcorp.example', 'corp.example', false],
    ['https://corp.example', 'other.example, corp.example', true],
    ['https://corp.example', 'other.example corp.example', true],
    ['https://CORP.example', 'corp.EXAMPLE', true],
    ['https://corp.example', 'corp.example:443', true],
    ['https://corp.example:8443', 'corp.example:443', false],
    ['http://10.1.2.3', '10.0.0.0/8', true],
    ['http://11.1.2.3', '10.0.0.0/8', false],
    ['http://127.0.0.1:9', '127.0.0.1', true],
    ['http://[::1]:9', '::1', true],
    ['http://[::1]:9', '[::1]:9', true],
    ['https://rabbit.test', '', false],
    ['https://rabbit.test', 'test.rabbit', false],
  ])('%s with NO_PROXY=%j bypasses: %s', (origin, noProxy, bypass) => {
    expect(bypassesProxy(new URL(origin), noProxy)).toBe(bypass);
  });

  it('refuses a proxy it cannot use without printing its credentials', () => {
    let error: unknown;
    try {
      parseProxyUrl('socks5://bob:hunter22@p:1080', 'HTTPS_PROXY');
    } catch (caught) {
      error = caught;
    }
    expect(isRabbitError(error, 'USAGE')).toBe(true);
    expect((error as Error).message).not.toContain('hunter22');
    expect(redactUrl('connect via http://bob:hunter22@p:1 failed')).toBe('connect via http://REDACTED@p:1 failed');
    expect(redactUrl('http://bob:p@ss@p:1/')).toBe('http://REDACTED@p:1/');
  });
});

describe('base URL transport', () => {
  it.each([
    ['https://pidoco.com', false],
    ['http://127.0.0.1:8080', false],
    ['http://127.5.6.7', false],
    ['http://localhost:3000/base', false],
    ['http://[::1]:3000', false],
    ['http://rabbit.test', true],
  ])('%s (allow insecure: %s) is accepted', (url, allowInsecureHttp) => {
    expect(() => parseBaseUrl(url, { allowInsecureHttp })).not.toThrow();
  });

  it.each(['http://rabbit.test', 'http://10.0.0.2', 'http://127.0.0.1.evil.example'])(
    '%s is refused, naming --allow-insecure-http',
    (url) => {
      let error: unknown;
      try {
        parseBaseUrl(url, { allowInsecureHttp: false });
      } catch (caught) {
        error = caught;
      }
      expect(isRabbitError(error, 'USAGE')).toBe(true);
      expect((error as Error).message).toContain('--allow-insecure-http');
    },
  );

  it('knows loopback names', () => {
    expect(['localhost', '127.0.0.1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['localhost.example', '128.0.0.1', '[::2]'].some(isLoopbackHost)).toBe(false);
  });
});

describe('redirect decisions', () => {
  const origin = 'https://svc.example';
  const decide = (location: string | undefined, hops = 0) =>
    decideRedirect(origin, '/rabbit/api/a.json', '/rabbit/api/a.json', 302, location, hops);

  it.each([
    ['/rabbit/api/b.json', '/rabbit/api/b.json'],
    ['b.json', '/rabbit/api/b.json'],
    ['https://svc.example/x?api_key=leak&v=2', '/x?v=2'],
    ['https://svc.example:443/y', '/y'],
  ])('follows %s on the same origin to %s', (location, path) => {
    expect(decide(location)).toEqual({ follow: path });
  });

  it.each([
    ['http://svc.example/a'],
    ['https://svc.example:8443/a'],
    ['https://other.example/a?api_key=leak'],
    ['//other.example/a'],
  ])('refuses %s: another origin', (location) => {
    const decision = decide(location);
    expect('refuse' in decision && decision.refuse.status).toBe(302);
    expect('refuse' in decision && decision.refuse.errorClass).toBe('resource');
    expect('refuse' in decision && decision.refuse.message).not.toContain('leak');
  });

  it('refuses a missing Location and too many hops', () => {
    expect('refuse' in decide(undefined)).toBe(true);
    expect('follow' in decide('/b', MAX_REDIRECTS - 1)).toBe(true);
    expect('refuse' in decide('/b', MAX_REDIRECTS)).toBe(true);
  });
});
