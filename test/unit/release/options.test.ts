// `npm run release` arguments: what a user types, and the one line naming the flag to fix.
import { describe, expect, it } from 'vitest';
import { ReleaseError } from '../../../scripts/release/errors.ts';
import { parseReleaseArgs } from '../../../scripts/release/options.ts';

const refusal = (argv: string[]): string => {
  try {
    parseReleaseArgs(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(ReleaseError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('parseReleaseArgs', () => {
  it('splits --to into the registry and the repository path; --out defaults to .release', () => {
    expect(
      parseReleaseArgs(['--to', 'oci://ghcr.io/static-export-operator', '--sign-key', 'cosign.key']),
    ).toEqual({
      to: {
        registry: 'ghcr.io',
        path: 'static-export-operator',
        repository: 'ghcr.io/static-export-operator',
      },
      signKey: 'cosign.key',
      out: '.release',
      plainHttp: false,
    });
    const local = parseReleaseArgs([
      '--to',
      'oci://127.0.0.1:5000/team/docs/',
      '--sign-key',
      'env://COSIGN_PRIVATE_KEY',
      '--out',
      'out',
      '--plain-http',
    ]);
    expect(local.to).toEqual({
      registry: '127.0.0.1:5000',
      path: 'team/docs',
      repository: '127.0.0.1:5000/team/docs',
    });
    expect(local).toMatchObject({ out: 'out', plainHttp: true, signKey: 'env://COSIGN_PRIVATE_KEY' });
  });

  it('refuses a missing or malformed --to, naming the form it wants', () => {
    expect(refusal(['--sign-key', 'k'])).toMatch(
      /^--to is required \(usage: npm run release -- --to oci:\/\//,
    );
    for (const to of ['https://ghcr.io/org', 'oci://ghcr.io', 'ghcr.io/org', 'oci://GHCR.io/Org']) {
      expect(refusal(['--to', to, '--sign-key', 'k'])).toBe(
        '--to must be oci://REGISTRY/PATH, e.g. --to oci://ghcr.io/my-org',
      );
    }
  });

  it('refuses to release unsigned: without --sign-key it says how to make a key', () => {
    expect(refusal(['--to', 'oci://ghcr.io/org'])).toBe(
      'no signing key: pass --sign-key cosign.key (make one with `cosign generate-key-pair`) or --sign-key env://COSIGN_PRIVATE_KEY',
    );
  });

  it('refuses an unknown flag with the usage, on one line', () => {
    const message = refusal(['--to', 'oci://ghcr.io/org', '--sign-key', 'k', '--push']);
    expect(message).toMatch(/^Unknown option '--push' \(usage: /);
    expect(message).not.toContain('\n');
  });
});
