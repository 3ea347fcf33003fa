// `npm run bench [-- <name>...]`: runs the benchmarks under bench/ (all of them by default).
// Each module exports `run(): Promise<void>` and prints its own figures; nothing is asserted.

interface BenchModule {
  run(): Promise<void>;
}

const BENCHES: Record<string, () => Promise<BenchModule>> = {
  download: () => import('../bench/download.ts'),
  operator: () => import('../bench/operator.ts'),
  idle: () => import('../bench/idle.ts'),
  reroll: () => import('../bench/reroll.ts'),
  node: () => import('../bench/node.ts'),
  mirror: () => import('../bench/mirror.ts'),
  polling: () => import('../bench/polling.ts'),
  rolls: () => import('../bench/rolls.ts'),
  budget: () => import('../bench/budget.ts'),
  git: () => import('../bench/git-write-back.ts'),
  startup: () => import('../bench/startup.ts'),
  'git-hostile': () => import('../bench/git-hostile.ts'),
  'git-ssh': () => import('../bench/git-ssh.ts'),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (available: ${Object.keys(BENCHES).join(', ')})`);
  process.exit(2);
}
for (const name of requested.length > 0 ? requested : Object.keys(BENCHES)) {
  console.log(`== ${name}`);
  await (await (BENCHES[name] as () => Promise<BenchModule>)()).run();
}
