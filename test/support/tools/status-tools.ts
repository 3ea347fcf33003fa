// What other tools make of our objects' status, run for real: Flux's kstatus library (through the
// small Go checker in test/support/tools/kstatus-check, built by scripts/go-tools/build.sh) and the Argo CD
// health check (examples/argocd/health.lua) in a Lua 5.1 interpreter, as Argo CD runs it.
import { join } from 'node:path';
import { ROOT, run } from '../cluster/kube.ts';
import { goTool } from './go-tools.ts';

export interface KstatusResult {
  kind: string;
  name: string;
  status: 'InProgress' | 'Current' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';
  message: string;
}

/** kstatus's verdict on each object (as `kubectl get -o json` or the API returns them). */
export async function kstatus(objects: readonly unknown[]): Promise<KstatusResult[]> {
  const r = await run(await goTool('kstatus-check'), [], JSON.stringify(objects));
  if (r.code !== 0) throw new Error(`kstatus-check failed (${r.code}): ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KstatusResult);
}

export const ARGOCD_HEALTH_SCRIPT = join(ROOT, 'examples', 'argocd', 'health.lua');
export const LUA = 'lua5.1';

export interface ArgoHealth {
  status: 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';
  message: string;
}

/** A JSON value as a Lua table constructor, the way Argo CD hands objects to health scripts. */
export function luaLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    // Lua 5.1 has no \u escapes: each byte that is not printable ASCII goes as \ddd (three digits,
    // so a digit after it is not read as part of it).
    let out = '"';
    for (const byte of Buffer.from(value, 'utf8')) {
      const ch = String.fromCharCode(byte);
      out +=
        byte >= 0x20 && byte < 0x7f && ch !== '"' && ch !== '\\' ? ch : `\\${String(byte).padStart(3, '0')}`;
    }
    return `${out}"`;
  }
  if (Array.isArray(value)) return `{${value.map(luaLiteral).join(', ')}}`;
  const fields = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `[${luaLiteral(k)}] = ${luaLiteral(v)}`);
  return `{${fields.join(', ')}}`;
}

/** The health Argo CD shows for `obj`, computed by the shipped script in Lua 5.1. */
export async function argoHealth(obj: unknown): Promise<ArgoHealth> {
  const program = [
    `obj = ${luaLiteral(obj)}`,
    `local hs = dofile(${luaLiteral(ARGOCD_HEALTH_SCRIPT)})`,
    'io.write(hs.status, "\\n", hs.message or "")',
  ].join('\n');
  const r = await run(LUA, ['-'], program);
  if (r.code !== 0) throw new Error(`${LUA} failed (${r.code}): ${r.stderr}`);
  const [status, ...message] = r.stdout.split('\n');
  return { status: status as ArgoHealth['status'], message: message.join('\n') };
}
