// The yardstick of issue 9: a bare undici Pool fetching exactly the URLs a full export fetches
// (the fake service's own enumeration, same seed and dataset), bodies discarded, nothing stored.
// Prints one JSON line: wall time and this process's CPU for the fetching alone (cpuMs), and the
// CPU of its own start-up, node's and `import 'undici'`'s (startCpuMs): the export's CPU figure is
// its whole process, start-up included, so the two together are the like-for-like yardstick. The
// URL list is built in between and counted in neither: only the bench needs it.
const { Pool } = await import('undici');
const started = process.cpuUsage();
const startCpuMs = (started.user + started.system) / 1000;
const { exportPaths, FakeStore } = await import('../dist/fake-service/index.js');

const { baseUrl, key, seed, dataset, concurrency } = JSON.parse(process.argv[2]);
const store = new FakeStore(seed, dataset, () => 0);
const query = `?api_key=${encodeURIComponent(key)}`;
// Built before the clock starts: the list is the bench's business, not the client's cost.
const paths = [...exportPaths(store)].map((path) => (path.startsWith('/rabbit/api/') ? `${path}${query}` : path));

const pool = new Pool(baseUrl, { connections: concurrency, pipelining: 1, keepAliveTimeout: 10_000 });
let next = 0;
let failed = 0;
const cpuBefore = process.cpuUsage();
const startedAt = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < paths.length) {
      const path = paths[next++];
      const { statusCode, body } = await pool.request({ path, method: 'GET' });
      for await (const _chunk of body) {
        // discarded
      }
      if (statusCode !== 200) failed++;
    }
  }),
);
const wallMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
const cpu = process.cpuUsage(cpuBefore);
await pool.close();
console.log(
  JSON.stringify({ requests: paths.length, failed, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, startCpuMs }),
);
