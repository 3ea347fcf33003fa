// Argo CD's override file: created when missing; the parameter set with forceString; every other
// parameter and line kept.
import { describe, expect, it } from 'vitest';
import { isArgoCdOverrideFile, setOverrideParameter } from '../../../src/git/argocd-override.ts';

const PATH = 'apps/docs/.argocd-source-docs.yaml';
const set = (source: string | undefined, value = 'sha256-new') =>
  setOverrideParameter(source, PATH, 'staticExport.version', value);
const CREATED =
  'helm:\n  parameters:\n  - name: staticExport.version\n    value: sha256-new\n    forceString: true\n';

describe('the Argo CD override file', () => {
  it('is recognised by its base name only', () => {
    expect(isArgoCdOverrideFile(PATH)).toBe(true);
    expect(isArgoCdOverrideFile('.argocd-source-docs.yaml')).toBe(true);
    expect(isArgoCdOverrideFile('apps/docs/values.yaml')).toBe(false);
    expect(isArgoCdOverrideFile('.argocd-source-docs.yaml/values.yaml')).toBe(false);
  });

  it('created when missing or empty', () => {
    expect(set(undefined)).toBe(CREATED);
    expect(set('')).toBe(CREATED);
  });

  it('a parameter appended after the others, at their indentation', () => {
    expect(set('helm:\n  parameters:\n    - name: image.tag\n      value: v1\n')).toBe(
      'helm:\n  parameters:\n    - name: image.tag\n      value: v1\n    - name: staticExport.version\n      value: sha256-new\n      forceString: true\n',
    );
  });

  it('the existing parameter updated in place, forceString made true, the rest kept', () => {
    expect(
      set(
        'helm:\n  parameters:\n  - name: staticExport.version\n    value: old\n    forceString: false\n  - name: b\n    value: "2"\n',
      ),
    ).toBe(
      'helm:\n  parameters:\n  - name: staticExport.version\n    value: sha256-new\n    forceString: true\n  - name: b\n    value: "2"\n',
    );
  });

  it('parameters added beside other helm settings and other sections', () => {
    expect(set('helm:\n  valueFiles: [a.yaml]\n')).toBe(
      'helm:\n  valueFiles: [a.yaml]\n  parameters:\n  - name: staticExport.version\n    value: sha256-new\n    forceString: true\n',
    );
    expect(set('kustomize:\n  images: []\n')).toBe(`kustomize:\n  images: []\n${CREATED}`);
  });

  it('unchanged when the parameter holds the version with forceString', () => {
    expect(set(CREATED)).toBeUndefined();
  });

  it('helm.parameters that is no list: GitFieldInvalid', () => {
    expect(() => set('helm:\n  parameters: 3\n')).toThrow(
      `${PATH}: helm.parameters is not a block sequence of parameters`,
    );
  });
});

describe('parameters Argo CD would read otherwise than written: refused', () => {
  const refusal = (source: string) => {
    try {
      set(source);
    } catch (error) {
      return { reason: (error as { reason?: string }).reason, message: (error as Error).message };
    }
    return undefined;
  };

  it('the parameter named twice', () => {
    expect(
      refusal(
        'helm:\n  parameters:\n  - name: staticExport.version\n    value: a\n  - name: staticExport.version\n    value: b\n',
      ),
    ).toEqual({
      reason: 'GitFieldInvalid',
      message: `${PATH}: helm.parameters names staticExport.version 2 times (Argo CD would take one of them, not necessarily the one written): keep one entry`,
    });
  });

  it.each([
    ['an aliased entry', 'x: &p\n  name: staticExport.version\n  value: old\nhelm:\n  parameters:\n  - *p\n'],
    [
      'a merge key',
      'x: &p\n  name: staticExport.version\nhelm:\n  parameters:\n  - <<: *p\n    value: old\n',
    ],
    ['an aliased value', 'x: &v old\nhelm:\n  parameters:\n  - name: staticExport.version\n    value: *v\n'],
    ['an anchored entry', 'helm:\n  parameters:\n  - &p\n    name: staticExport.version\n    value: old\n'],
  ])('%s', (_title, source) => {
    expect(refusal(source)).toMatchObject({
      reason: 'GitFieldInvalid',
      message: expect.stringContaining('helm.parameters entry 1 uses an anchor, alias or merge key'),
    });
  });
});
