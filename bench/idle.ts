// The operator's idle footprint: resident memory of the operator process with 10 releases Ready
// and nothing changing for 60 s (BENCH_STEADY_SECONDS). Target: under 100 MB.
import { scenario } from './operator.ts';

export async function run(): Promise<void> {
  await scenario(10, Number(process.env.BENCH_STEADY_SECONDS ?? 60), true);
}
