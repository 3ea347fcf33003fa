import { describe, expect, it } from 'vitest';
import { staticExportReleaseSpecSchema } from '../../../src/crd/index.ts';
import { renderCommitMessage } from '../../../src/git/message.ts';

const OLD = `sha256-${'1'.repeat(64)}`;
const NEW = `sha256-${'2'.repeat(64)}`;
const vars = { site: 'docs.example.com', oldVersion: OLD, newVersion: NEW, release: 'docs/production' };

describe('renderCommitMessage', () => {
  it('writes the default message: the new version and site in the subject, the release and old version below', () => {
    expect(renderCommitMessage(undefined, vars)).toBe(
      `Publish ${NEW} of docs.example.com\n\nStaticExportRelease docs/production published it (previously ${OLD}).`,
    );
  });

  it('says none for the version before the first one written', () => {
    expect(renderCommitMessage(undefined, { ...vars, oldVersion: undefined })).toContain('(previously none)');
  });

  it('replaces every placeholder of a template, with or without spaces, each time it appears', () => {
    expect(
      renderCommitMessage(
        'docs({{.Release}}): {{ .Site }} {{.OldVersion}} -> {{.NewVersion}} [{{.Site}}]',
        vars,
      ),
    ).toBe(`docs(docs/production): docs.example.com ${OLD} -> ${NEW} [docs.example.com]`);
  });

  it('keeps text and braces that are no placeholder as written', () => {
    expect(renderCommitMessage('a {b} }} {{.NewVersion}} {{', vars)).toBe(`a {b} }} ${NEW} {{`);
  });

  it('renders what the schema accepts, and the schema refuses what it would not replace', () => {
    const accepted = (messageTemplate: string) =>
      staticExportReleaseSpecSchema.safeParse({
        domain: 'docs.example.com',
        credentialsSecretRef: { name: 'k' },
        target: { valuesSecret: { name: 'v' } },
        gitWriteBack: { url: 'https://git.example.com/a/b.git', path: 'v.yaml', messageTemplate },
      }).success;
    for (const template of ['{{.Site}}', '{{ .NewVersion }}', '{{.OldVersion}}{{.Release}}'])
      expect([accepted(template), renderCommitMessage(template, vars)]).toEqual([
        true,
        expect.not.stringContaining('{{'),
      ]);
    for (const template of ['{{.Link}}', '{{ .constructor }}', '{{.toString}}'])
      expect([accepted(template), renderCommitMessage(template, vars)]).toEqual([false, template]);
  });
});
