// The one place signing hooks into `mirror push`, `load` and `sync`: the hook receives each pushed
// manifest's digest (and repository) before moving tags point at it, so a followed tag never
// names an unsigned version. Nothing signs yet; `--sign-key` (cosign format) plugs in here.
import type { PushImageOptions } from '../oci/image.ts';

export function signingHook(_flags: object): PushImageOptions['afterManifest'] {
  return undefined;
}
