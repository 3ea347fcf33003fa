// The commit message of a version written back to Git (spec.gitWriteBack.messageTemplate). The
// placeholders are Go-template-like, as in Flux's image automation, but only these four are
// replaced: the schema refuses any other, so nothing else can be asked to appear in the commit.
import {
  type CommitMessagePlaceholder,
  DEFAULT_COMMIT_MESSAGE_TEMPLATE,
  PLACEHOLDER,
} from '../crd/git-write-back.ts';

export interface CommitMessageVars {
  /** The site: its domain, project id or registry repository. */
  site: string;
  /** The version served before; undefined for the first one written. */
  oldVersion: string | undefined;
  newVersion: string;
  /** The StaticExportRelease, namespace/name. */
  release: string;
}

/** `template` (the default when undefined) with its placeholders replaced. */
export function renderCommitMessage(template: string | undefined, vars: CommitMessageVars): string {
  const values: Record<CommitMessagePlaceholder, string> = {
    Site: vars.site,
    OldVersion: vars.oldVersion ?? 'none',
    NewVersion: vars.newVersion,
    Release: vars.release,
  };
  return (template ?? DEFAULT_COMMIT_MESSAGE_TEMPLATE).replace(
    new RegExp(PLACEHOLDER, 'g'),
    (_placeholder, name: CommitMessagePlaceholder) => values[name],
  );
}
