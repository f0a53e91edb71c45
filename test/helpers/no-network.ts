import nock from 'nock';

// Tests never reach the internet: anything that goes through node:http or the global fetch
// (the oracle walk, the view server checks) may only talk to loopback. The exporter's own undici
// pool is not seen by nock; its tests only ever get a 127.0.0.1 base URL.
nock.disableNetConnect();
nock.enableNetConnect((host) => /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host));
